// pinocchio_harness.cpp — Pinocchio's C++ kernels timed with no Python in the way (bench.pinocchio_cpp).
//
// Compiled by bench/pinocchio_cpp.py against the headers and libraries of the `pin` wheel
// (cmeel.prefix: Pinocchio, Boost; Eigen from cmeel-eigen), header-only for the algorithms, and run as
//
//     pinocchio_harness MODEL STATES OUTDIR LOOPS [COUNT]
//
// MODEL is the pin.Model the Python side built from the URDF (pin.buildModelFromUrdf, saved by its
// saveToBinary: the wheel ships no urdfdom headers to parse it here); STATES holds n states (q, v, a, τ) in Pinocchio's order and conventions.  For each kernel (rnea, crba, aba,
// computeMinverse, computeRNEADerivatives, computeABADerivatives) it writes its results on the first
// NCHECK states to OUTDIR/pin_KERNEL.bin (symmetric matrices completed from the upper triangle, which
// is what Pinocchio fills), prints a checksum (sum of |x|), and times it by kernels_harness.c's rules:
// one untimed loop through the n states, then LOOPS timed loops (one count, or six comma-separated in
// the kernels' order; the same counts both harnesses get), lines "loops NAME T1 T2 …" (CPU time per
// call of each loop) and "kernel NAME BEST CHECKSUM"; or, with COUNT > 0, COUNT calls between a
// zeroing and a dump of callgrind's counters.
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

constexpr int NCHECK = 4, NKERNELS = 6, MAX_LOOPS = 100000;
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

// LOOPS: one count for every kernel, or NKERNELS comma-separated; each in 1 … MAX_LOOPS
std::vector<int> parse_loops(const std::string &arg)
{
    const std::string bad = "LOOPS: expected 1 or 6 comma-separated counts in 1..100000, got " + arg;
    std::vector<int> loops;
    size_t at = 0;
    while (true) {
        const size_t comma = arg.find(',', at);
        const std::string word = arg.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        char *end = nullptr;
        const long v = std::strtol(word.c_str(), &end, 10);
        if (word.empty() || *end != '\0' || v < 1 || v > MAX_LOOPS)
            die(bad);
        loops.push_back(int(v));
        if (comma == std::string::npos)
            break;
        at = comma + 1;
    }
    if (loops.size() == 1)
        loops.assign(NKERNELS, loops[0]);
    if (loops.size() != size_t(NKERNELS))
        die(bad);
    return loops;
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
        die("usage: pinocchio_harness MODEL STATES OUTDIR LOOPS [COUNT]");
    pinocchio::Model model;
    model.loadFromBinary(argv[1]);
    pinocchio::Data data(model);
    const States s = read_states(argv[2]);
    if (s.nq != model.nq || s.nv != model.nv || s.n < 1)
        die(std::string("states do not fit the model: ") + argv[2]);
    const std::string outdir = argv[3];
    const std::vector<int> loops = parse_loops(argv[4]);
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
    for (size_t j = 0; j < kernels.size(); j++) {
        const Kernel &kernel = kernels[j];
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
            std::printf("kernel %s 0 %.17g\n", kernel.name, checksum);
            continue;
        }
        run_loop(kernel.call, s.n, s.n);  // warm-up
        std::printf("loops %s", kernel.name);
        for (int r = 0; r < loops[j]; r++) {
            const double t0 = cpu_seconds();
            run_loop(kernel.call, s.n, s.n);
            const double t = cpu_seconds() - t0;
            best = std::min(best, t);
            std::printf(" %.6e", t / s.n);
        }
        std::printf("\nkernel %s %.6e %.17g\n", kernel.name, best / s.n, checksum);
    }
    return 0;
}
