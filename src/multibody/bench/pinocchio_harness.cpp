// pinocchio_harness.cpp — Pinocchio's C++ kernels timed with no Python in the way (bench.pinocchio_cpp).
//
// Compiled by bench/pinocchio_cpp.py against the headers and libraries of the `pin` wheel
// (cmeel.prefix: Pinocchio, Boost; Eigen from cmeel-eigen), header-only for the algorithms, and run as
//
//     pinocchio_harness MODEL STATES OUTDIR REPEAT [COUNT]
//
// MODEL is the pin.Model the Python side built from the URDF (pin.buildModelFromUrdf, saved by its
// saveToBinary: the wheel ships no urdfdom headers to parse it here); STATES holds n states (q, v, a, τ) in Pinocchio's order and conventions.  For each kernel (rnea, crba, aba,
// computeMinverse, computeRNEADerivatives, computeABADerivatives) it writes its results on the first
// NCHECK states to OUTDIR/pin_KERNEL.bin (symmetric matrices completed from the upper triangle, which
// is what Pinocchio fills), prints a checksum (sum of |x|), and times it as kernels_harness.c does
// (best of REPEAT loops through the n states, CPU time per call), or, with COUNT, runs COUNT calls
// between a zeroing and a dump of callgrind's counters.
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif
#endif
#ifndef HAVE_CALLGRIND
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(name) (void)(name)
#endif

namespace {

constexpr int NCHECK = 4;
using Matrix = Eigen::MatrixXd;
using Vector = Eigen::VectorXd;

[[noreturn]] void die(const std::string &what)
{
    std::fprintf(stderr, "pinocchio_harness: %s\n", what.c_str());
    std::exit(2);
}

struct States {
    int n = 0, nq = 0, nv = 0;
    std::vector<Vector> Q, V, A, T;
};

States read_states(const char *path)
{
    FILE *f = std::fopen(path, "rb");
    if (!f)
        die(std::string("cannot open ") + path);
    int head[3];
    if (std::fread(head, sizeof(int), 3, f) != 3)
        die(std::string("cannot read ") + path);
    States s;
    s.n = head[0], s.nq = head[1], s.nv = head[2];
    auto block = [&](int width, std::vector<Vector> &rows) {
        rows.assign(s.n, Vector(width));
        for (int k = 0; k < s.n; k++)
            if (std::fread(rows[k].data(), sizeof(double), width, f) != size_t(width))
                die(std::string("cannot read ") + path);
    };
    block(s.nq, s.Q), block(s.nv, s.V), block(s.nv, s.A), block(s.nv, s.T);
    std::fclose(f);
    return s;
}

double cpu_seconds()
{
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

Matrix symmetric(const Matrix &M)  // Pinocchio fills the upper triangle of M and M⁻¹
{
    Matrix S = M;
    S.triangularView<Eigen::StrictlyLower>() = M.transpose().triangularView<Eigen::StrictlyLower>();
    return S;
}

__attribute__((noinline)) void run_loop(const std::function<void(int)> &kernel, int n, long calls)
{
    for (long c = 0; c < calls; c++)
        kernel(int(c % n));
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 5)
        die("usage: pinocchio_harness MODEL STATES OUTDIR REPEAT [COUNT]");
    pinocchio::Model model;
    model.loadFromBinary(argv[1]);
    pinocchio::Data data(model);
    const States s = read_states(argv[2]);
    if (s.nq != model.nq || s.nv != model.nv || s.n < 1)
        die(std::string("states do not fit the model: ") + argv[2]);
    const std::string outdir = argv[3];
    const int repeat = std::atoi(argv[4]);
    const long count = argc > 5 ? std::atol(argv[5]) : 0;

    // each kernel: the call on state k, and its results as one row of numbers
    struct Kernel {
        const char *name;
        std::function<void(int)> call;
        std::function<std::vector<Matrix>()> result;
    };
    const std::vector<Kernel> kernels = {
        {"rnea", [&](int k) { pinocchio::rnea(model, data, s.Q[k], s.V[k], s.A[k]); },
         [&] { return std::vector<Matrix>{data.tau}; }},
        {"crba", [&](int k) { pinocchio::crba(model, data, s.Q[k]); },
         [&] { return std::vector<Matrix>{symmetric(data.M)}; }},
        {"aba", [&](int k) { pinocchio::aba(model, data, s.Q[k], s.V[k], s.T[k]); },
         [&] { return std::vector<Matrix>{data.ddq}; }},
        {"minv", [&](int k) { pinocchio::computeMinverse(model, data, s.Q[k]); },
         [&] { return std::vector<Matrix>{symmetric(data.Minv)}; }},
        {"rnea_derivatives",
         [&](int k) { pinocchio::computeRNEADerivatives(model, data, s.Q[k], s.V[k], s.A[k]); },
         [&] { return std::vector<Matrix>{data.dtau_dq, data.dtau_dv, symmetric(data.M)}; }},
        {"aba_derivatives",
         [&](int k) { pinocchio::computeABADerivatives(model, data, s.Q[k], s.V[k], s.T[k]); },
         [&] { return std::vector<Matrix>{data.ddq_dq, data.ddq_dv, symmetric(data.Minv)}; }},
    };
    for (const Kernel &kernel : kernels) {
        const std::string path = outdir + "/pin_" + kernel.name + ".bin";
        FILE *f = std::fopen(path.c_str(), "wb");
        if (!f)
            die("cannot write " + path);
        double checksum = 0;
        for (int k = 0; k < std::min(s.n, NCHECK); k++) {
            kernel.call(k);
            for (const Matrix &r : kernel.result()) {
                // row-major, as ours
                const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rm = r;
                checksum += rm.cwiseAbs().sum();
                std::fwrite(rm.data(), sizeof(double), size_t(rm.size()), f);
            }
        }
        std::fclose(f);
        double best = INFINITY;
        if (count > 0) {
            CALLGRIND_ZERO_STATS;
            run_loop(kernel.call, s.n, count);
            CALLGRIND_DUMP_STATS_AT(kernel.name);
        } else {
            run_loop(kernel.call, s.n, s.n);  // warm-up
            for (int r = 0; r < repeat; r++) {
                const double t0 = cpu_seconds();
                run_loop(kernel.call, s.n, s.n);
                best = std::min(best, cpu_seconds() - t0);
            }
        }
        std::printf("kernel %s %.6e %.17g\n", kernel.name, count > 0 ? 0.0 : best / s.n, checksum);
    }
    return 0;
}
