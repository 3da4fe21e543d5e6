"""Files written by others are checked before use; files we write are atomic, leave no debris and
respect the umask (issue 17, item 5)."""
import os
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import zipfile

import numpy as np
import pytest

import multibody as mb

SRC = os.path.dirname(os.path.dirname(mb.__file__))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A valid trajectory file with an event, and its arrays."""
    model = mb.models.double_pendulum()
    wall = mb.joint_wall(model, "th1", 0.2, side="upper", restitution=0.5)
    traj = mb.simulate(model, [0.0, 0.0], [3.0, 0.0], 0.5, events=[wall])
    assert traj.events, "the run must record an event"
    path = tmp_path_factory.mktemp("traj") / "run.npz"
    traj.save(path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    return model, path, arrays


def _mutations(d):
    """(label, arrays) of structurally broken files, each from the valid one."""
    n, nq = d["q"].shape
    out = []

    def case(label, **change):
        new = {k: v for k, v in d.items() if k not in change or change[k] is not None}
        new.update({k: v for k, v in change.items() if v is not None})
        out.append((label, new))

    case("q shorter than t", q=d["q"][:-3])
    case("complex q", q=d["q"] + 0j)
    case("string q", q=d["q"].astype(str))
    case("NaN in t", t=np.where(np.arange(n) == 5, np.nan, d["t"]))
    case("decreasing t", t=d["t"][::-1].copy())
    case("quaternion_starts beyond q", quaternion_starts=np.array([nq], dtype=np.int64))
    case("overlapping quaternion_starts", quaternion_starts=np.array([0, 2], dtype=np.int64))
    case("event names and times disagree", event_name=np.array(["a", "b", "c", "d", "e", "f"][:len(d["event_t"]) + 1]))
    case("event_q of the wrong width", event_q=d["event_q"][:, :-1])
    case("event after the last sample", event_t=d["event_t"] + 100.0)
    case("qd with another number of rows", qd=d["qd"][:-1])
    case("tau with another width", tau=d["tau"][:, :1])
    case("meta too short", meta=d["meta"][:3])
    out.append(("no q", {k: v for k, v in d.items() if k != "q"}))
    out.append(("no meta", {k: v for k, v in d.items() if k != "meta"}))
    out.append(("no event_t", {k: v for k, v in d.items() if k != "event_t"}))
    case("an object array", tau=np.array([object()] * n))
    return out


EXPECT = {  # what each message names
    "q shorter than t": "'q' has shape", "complex q": "'q' has dtype complex", "string q": "'q' has dtype <U",
    "NaN in t": "non-finite times", "decreasing t": "decreases", "quaternion_starts beyond q": "quaternion_starts",
    "overlapping quaternion_starts": "quaternion_starts", "event names and times disagree": "event arrays",
    "event_q of the wrong width": "event arrays", "event after the last sample": "event times",
    "qd with another number of rows": "'qd' has shape", "tau with another width": "'tau' has shape",
    "meta too short": "'meta' has shape", "no q": "no 'q' array", "no meta": "no 'meta' array",
    "no event_t": "no 'event_t' array", "an object array": "Python objects",
}


@pytest.mark.parametrize("label", sorted(EXPECT))
def test_every_structural_fault_is_one_value_error_naming_the_file(saved, tmp_path, label):
    _, _, arrays = saved
    d = dict(_mutations(arrays))[label]
    path = tmp_path / "broken.npz"
    np.savez(path, **d)
    with pytest.raises(ValueError) as err:
        mb.Trajectory.load(path)
    assert type(err.value) is ValueError
    assert str(path) in str(err.value) and EXPECT[label] in str(err.value), str(err.value)


def test_model_mismatch_and_the_valid_file_still_loads(saved, tmp_path):
    model, path, arrays = saved
    back = mb.Trajectory.load(path, model=model)
    assert np.array_equal(back.q, arrays["q"]) and len(back.events) == len(arrays["event_t"])
    with pytest.raises(ValueError, match="another model"):
        mb.Trajectory.load(path, model=mb.models.planar(3))
    # the right fingerprint but a quaternion the model does not have (q has room for none)
    p = tmp_path / "q.npz"
    np.savez(p, **dict(arrays, quaternion_starts=np.array([0], dtype=np.int64)))
    with pytest.raises(ValueError, match="quaternion_starts"):
        mb.Trajectory.load(p, model=model)


def _npy_header(shape, dtype="<f8"):
    """A .npy version 1.0 header claiming ``shape``."""
    hdr = {"descr": dtype, "fortran_order": False, "shape": shape}
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, hdr)
    return buf.getvalue()


def test_a_member_claiming_gigabytes_is_refused_before_reading(saved, tmp_path, monkeypatch):
    """The issue's file: a few MB whose q claims shape (150 000 000, 2) — 2.4 GB once read."""
    _, _, arrays = saved
    path = tmp_path / "bomb.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for k, v in arrays.items():
            if k != "q":
                with zf.open(k + ".npy", "w") as fh:
                    np.lib.format.write_array(fh, v)
        zf.writestr("q.npy", _npy_header((150_000_000, 2)) + bytes(1 << 16))

    def no_reading(*a, **k):
        raise AssertionError("an array was read before the sizes were checked")
    monkeypatch.setattr(np.lib.format, "read_array", no_reading)
    with pytest.raises(ValueError, match=r"max_bytes=1073741824.*|more than max_bytes") as err:
        mb.Trajectory.load(path)
    assert "(150000000, 2)" in str(err.value) and str(path) in str(err.value)


def test_the_size_limit_is_overridable(saved):
    _, path, arrays = saved
    size = sum(a.nbytes for a in arrays.values())
    with pytest.raises(ValueError, match="max_bytes=1000"):
        mb.Trajectory.load(path, max_bytes=1000)
    assert len(mb.Trajectory.load(path, max_bytes=10 * size).t) == len(arrays["t"])
    with pytest.raises(ValueError, match="max_bytes"):
        mb.Trajectory.load(path, max_bytes=-1)


def _in_thread_or_unblock(fifo, call):
    """Run ``call``; if it blocks on the FIFO, a writer end releases it and the test fails."""
    box = {}

    def run():
        try:
            call()
            box["result"] = "returned"
        except BaseException as e:  # noqa: BLE001 - reported below
            box["error"] = e
    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(30)
    if th.is_alive():  # blocked in open(): give it a writer so the thread can end, then fail
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        th.join(30)
        pytest.fail(f"{call} blocked on a FIFO")
    return box


@pytest.mark.parametrize("loader", ["trajectory", "eom", "animation"])
def test_a_fifo_is_refused_not_waited_on(tmp_path, loader):
    from multibody.symbolic.eom import EquationsOfMotion
    from multibody.view import load_animation
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    call = {"trajectory": lambda: mb.Trajectory.load(fifo), "eom": lambda: EquationsOfMotion.load(fifo),
            "animation": lambda: load_animation(fifo)}[loader]
    box = _in_thread_or_unblock(fifo, call)
    assert isinstance(box.get("error"), ValueError), box
    assert "FIFO" in str(box["error"]) and fifo in str(box["error"])


def test_a_folder_is_refused_by_the_trajectory_loader(tmp_path):
    with pytest.raises(ValueError, match="a folder, not a regular file"):
        mb.Trajectory.load(tmp_path)


# ---- atomic writes: stale parts --------------------------------------------------------------
CHILD = textwrap.dedent("""
    import sys, time, numpy as np
    sys.path.insert(0, {src!r})
    import multibody as mb
    traj = mb.simulate(mb.models.planar(2), [0.3, 0.0], [0.0, 0.0], 0.2, dt=1e-2)
    real = np.savez
    def stalled(f, **arrays):
        f.write(b"PK\\x03\\x04 partial output " * 1000)
        f.flush()
        print("inside", flush=True)        # handshake: the part exists and is being written
        time.sleep(3600)
    np.savez = stalled
    traj.save({target!r})
""")


def _writer_inside_save(target):
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(src=SRC, target=str(target))],
                             stdout=subprocess.PIPE, text=True)
    line = child.stdout.readline()
    assert line.strip() == "inside", "the writer did not reach the write"
    return child


def _parts(folder, target_name):
    return sorted(p for p in os.listdir(folder) if p.startswith(f".{target_name}.") and ".part" in p)


def test_parts_of_a_killed_writer_are_removed_by_the_next_save_live_ones_kept(tmp_path):
    target = tmp_path / "run.npz"
    traj = mb.simulate(mb.models.planar(2), [0.1, 0.0], [0.0, 0.0], 0.1, dt=1e-2)
    traj.save(target)
    good = target.read_bytes()
    killed = _writer_inside_save(target)
    live = _writer_inside_save(target)
    try:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert len(_parts(tmp_path, "run.npz")) == 2
        assert target.read_bytes() == good                      # the target is never touched
        (tmp_path / "other.npz").write_bytes(b"x")              # parts of other targets: not ours to judge
        parts = _parts(tmp_path, "run.npz")
        killed_part = next((p for p in parts if f".{killed.pid}." in p), parts[0])
        other_part = tmp_path / killed_part.replace(".run.npz.", ".other.npz.", 1)
        other_part.write_bytes(b"x")
        traj.save(target)                                       # the next save cleans up
        left = _parts(tmp_path, "run.npz")
        assert left == [p for p in left if f".{live.pid}." in p] and len(left) == 1, left
        assert other_part.exists()
        assert np.array_equal(mb.Trajectory.load(target).q, traj.q)
    finally:
        live.kill()
        live.wait()
        killed.stdout.close()
        live.stdout.close()
    traj.save(target)
    assert _parts(tmp_path, "run.npz") == []


# ---- modes follow the umask ----------------------------------------------------------------------
def _written_files(folder):
    """Write each kind of output the library saves; returns their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from multibody import codegen
    from multibody.view import showmotion
    from multibody.view._io import save_figure
    model = mb.models.planar(2)
    traj = mb.simulate(model, [0.3, 0.0], [0.0, 0.0], 0.1, dt=1e-2)
    paths = [os.path.join(folder, n) for n in ("run.npz", "page.html", "fig.png", "f.py")]
    traj.save(paths[0])
    showmotion(model, traj, out=paths[1])
    fig = plt.figure()
    save_figure(fig, paths[2])
    plt.close(fig)
    codegen.to_numpy(model).save(paths[3])
    return paths


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_saved_files_respect_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        paths = _written_files(str(tmp_path))
    finally:
        os.umask(old)
    for p in paths:
        assert stat.S_IMODE(os.stat(p).st_mode) == mode, (p, oct(os.stat(p).st_mode))


# ---- MJCF: what a document asks MuJoCo to allocate is checked before MuJoCo sees it ---------------
@pytest.fixture
def no_mujoco_compile(monkeypatch):
    """MuJoCo's compiler must not be reached: the pre-check refuses first."""
    import mujoco

    def reached(*a, **k):
        raise AssertionError("MuJoCo's compiler was called")
    monkeypatch.setattr(mujoco.MjModel, "from_xml_string", staticmethod(reached))
    monkeypatch.setattr(mujoco.MjModel, "from_xml_path", staticmethod(reached))


HFIELD_BOMB = ('<mujoco><asset><hfield name="h" nrow="65536" ncol="65537" size="1 1 1 1"/></asset>'
               '<worldbody><geom type="hfield" hfield="h"/></worldbody></mujoco>')


def _png_header(w, h):
    import struct
    import zlib
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + ihdr
            + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)))


@pytest.mark.parametrize("case", ["hfield nrow x ncol", "hfield binary file", "texture builtin", "texture PNG",
                                  "nested replicate", "size nkey", "mesh file size", "include FIFO",
                                  "hfield file in assets", "flexcomp grid", "flex vertex list"])
def test_mjcf_sizes_are_refused_before_mujoco_compiles(tmp_path, no_mujoco_compile, case):
    from multibody.model.mjcf import MJCFError
    assets = None
    doc = {
        "hfield nrow x ncol": HFIELD_BOMB,
        "hfield binary file": '<mujoco><asset><hfield name="h" file="bomb.hf" size="1 1 1 1"/></asset></mujoco>',
        "hfield file in assets": '<mujoco><asset><hfield name="h" file="a.hf" size="1 1 1 1"/></asset></mujoco>',
        "texture builtin": '<mujoco><asset><texture name="t" type="2d" builtin="checker" width="100000" '
                           'height="100000"/></asset></mujoco>',
        "texture PNG": '<mujoco><compiler texturedir="tex"/><asset><texture name="t" type="2d" file="big.png"/>'
                       '</asset></mujoco>',
        "nested replicate": '<mujoco><worldbody><replicate count="1000"><replicate count="1000">'
                            '<body><geom size="1"/></body></replicate></replicate></worldbody></mujoco>',
        "size nkey": '<mujoco><size nkey="100000000"/></mujoco>',
        "mesh file size": '<mujoco><compiler meshdir="meshes"/><asset><mesh name="m" file="huge.stl"/></asset>'
                          '</mujoco>',
        "include FIFO": '<mujoco><include file="pipe.xml"/></mujoco>',
        # 194 bytes that kept MuJoCo's compiler busy for 88 s
        "flexcomp grid": '<mujoco><worldbody><flexcomp name="f" type="grid" count="150 150 1" spacing=".1 .1 .1" '
                         'dim="2" radius="0.01" mass="1"/></worldbody></mujoco>',
        "flex vertex list": '<mujoco><deformable><flex name="f" dim="1" body="world" vertex="'
                            + " ".join(["0 0 0"] * 5000) + '" element="0 1"/></deformable></mujoco>',
    }[case]
    expect = {"hfield nrow x ncol": r"<hfield name='h'> \(line 1\): nrow × ncol = 65536 × 65537",
              "hfield binary file": r"file 'bomb.hf': rows × columns = 65536 × 65537",
              "hfield file in assets": r"file 'a.hf': rows × columns = 70000 × 70000",
              "texture builtin": "10000000000 pixels", "texture PNG": "file 'big.png': width × height",
              "nested replicate": "1000000 copies", "size nkey": "nkey=100000000",
              "mesh file size": "huge.stl' has 268435457 bytes",
              "include FIFO": "pipe.xml' is not a regular file",
              "flexcomp grid": r"<flexcomp name='f'> \(line 1\): count '150 150 1' makes a flex of 22500 vertices",
              "flex vertex list": r"<flex name='f'> \(line 1\): 5000 vertices, more than the limit of 4096"}[case]
    (tmp_path / "bomb.hf").write_bytes(np.array([65536, 65537], "<i4").tobytes())
    (tmp_path / "tex").mkdir()
    (tmp_path / "tex" / "big.png").write_bytes(_png_header(100_000, 100_000))
    (tmp_path / "meshes").mkdir()
    with open(tmp_path / "meshes" / "huge.stl", "wb") as f:
        f.truncate((256 << 20) + 1)                 # mjcf_sizes.MAX_ASSET_BYTES + 1, sparse: no disk used
    os.mkfifo(tmp_path / "pipe.xml")
    if case == "hfield file in assets":
        assets = {"a.hf": np.array([70000, 70000], "<i4").tobytes()}
    path = tmp_path / "model.xml"
    path.write_text(doc)
    source = doc if assets else path
    with pytest.raises(MJCFError, match=expect) as err:
        mb.load_mjcf(source, assets=assets)
    assert (str(path) if source is path else "<string>") in str(err.value)
    assert len(HFIELD_BOMB) < 250


def test_a_flex_under_the_limit_still_loads():
    # 40 × 40 = 1600 vertices: well inside the bound, compiled by MuJoCo in well under a second
    doc = ('<mujoco><worldbody><body name="b" pos="0 0 1"><freejoint/><geom size=".1" mass="1"/></body>'
           '<flexcomp name="f" type="grid" count="40 40 1" spacing=".1 .1 .1" dim="2" radius="0.01" mass="1">'
           '<edge equality="true"/></flexcomp></worldbody></mujoco>')
    try:
        mb.load_mjcf(doc)
    except Exception as exc:                    # refused for what flexes change, never for their size
        assert "more than the limit" not in str(exc), exc


def test_mujoco_compiler_failures_become_mjcf_errors(monkeypatch):
    import mujoco

    from multibody.model.mjcf import MJCFError

    def unknown(*a, **k):
        raise RuntimeError("unknown exception")
    monkeypatch.setattr(mujoco.MjModel, "from_xml_string", staticmethod(unknown))
    with pytest.raises(MJCFError, match=r"<string>: MuJoCo's compiler refused the model \(RuntimeError\): "
                                        "unknown exception"):
        mb.load_mjcf('<mujoco><worldbody><body><joint/><geom size="0.1"/></body></worldbody></mujoco>')


def test_a_small_height_field_still_loads():
    m = mb.load_mjcf('<mujoco><asset><hfield name="h" nrow="64" ncol="64" size="1 1 1 1"/></asset>'
                     '<worldbody><geom type="hfield" hfield="h"/><body name="b"><joint name="j"/>'
                     '<geom size="0.1" mass="1"/></body></worldbody></mujoco>')
    assert m.body_names == ("b",) and m.nq == 1


def test_uint64_quaternion_starts_that_wrap_are_refused(tmp_path):
    """2**64 − 1 + 4 wraps to 3 in uint64: a free body's file (nq = 7) passed the bounds check."""
    b = mb.ModelBuilder("puck")
    b.add_body("puck", None, "free", mass=1.0, inertia=np.eye(3))
    model = b.build()
    traj = mb.simulate(model, model.neutral(), np.ones(6), 0.05)
    path = tmp_path / "free.npz"
    traj.save(path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["quaternion_starts"] = np.array([2**64 - 1], dtype=np.uint64)
    bad = tmp_path / "wrapped.npz"
    np.savez(bad, **arrays)
    with pytest.raises(ValueError, match="'quaternion_starts' .* are not increasing, non-overlapping"):
        mb.Trajectory.load(bad)

