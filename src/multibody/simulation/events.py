"""Events (guard and reset) and their location in time.

An :class:`Event` is a guard function ``g(t, q, qd)``; it fires where g crosses zero in its
``direction`` (−1: from positive to negative or zero, +1: from negative to positive or zero, 0:
either).  A run stops at the crossing, located by a bracketing root finder on the integrator's own
solution inside the step (fixed step: the step re-taken with a shorter length; adaptive: the
solver's dense output), applies ``reset(t, q, qd) -> (q, qd)`` and continues — or ends, if the
event is ``terminal``.  This is the MATLAB ``odeset('Events', …)`` pattern of the OpenDE report's
appendix D.5 (``collision_detection``), with the reset made part of the event.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import _checks


class _NonFinite(Exception):
    """The run's state or its dynamics turned non-finite (or overflowed): it diverged.  The loops
    catch it and end the run 'diverged'; it passes through an event's guard and reset (the hard
    stops' reset computes the dynamics) rather than being named as their error."""


class FiresForever(ValueError):
    """An event that fires forever: a reset that leaves the state on its guard, or Zeno motion.  simulate
    adds the cause where the model has a joint without inertia (dynamics.mobility.massless_cause)."""


#: crossing times are located to this width of the bracket (seconds)
EVENT_TIME_TOL = 1e-12
#: an event that fires this many times in a row within ZENO_WINDOW seconds "fires forever"
ZENO_COUNT = 50
ZENO_WINDOW = 1e-9


@dataclass(frozen=True)
class Event:
    """A guard ``g(t, q, qd) -> float`` with an optional reset ``(t, q, qd) -> (q, qd)``.

    ``direction``: −1 fires when g goes from > 0 to ≤ 0, +1 from < 0 to ≥ 0, 0 either way.
    ``terminal``: stop the run after the event (and its reset).  ``name`` labels the record.

    Example — the OpenDE report's colliding pendulum (appendix D.5), wall at θ = −π/2:

    >>> import numpy as np, multibody as mb
    >>> wall = mb.Event(lambda t, q, qd: q[0] + np.pi / 2, direction=-1,
    ...                 reset=lambda t, q, qd: (q, -qd), name="wall")
    >>> wall.name
    'wall'
    """
    guard: Callable
    direction: int = 0
    terminal: bool = False
    reset: Callable | None = None
    name: str | None = None

    def __post_init__(self):
        _checks.function("guard", self.guard, signature="g(t, q, qd) -> float")
        _checks.function("reset", self.reset, optional=True, signature="(t, q, qd) -> (q, qd)")
        _checks.one_of("direction", self.direction, (-1, 0, 1))
        if self.name is None:
            object.__setattr__(self, "name", getattr(self.guard, "__name__", "event"))

    def value(self, t, q, qd) -> float:
        """The guard's value, checked: a raising guard or a non-finite/non-scalar value is an error."""
        try:
            g = self.guard(t, q, qd)
        except _NonFinite:
            raise
        except Exception as e:  # the user's function: name it in the error
            raise ValueError(f"event {self.name!r}: guard raised {type(e).__name__}: {e} (at t = {float(t)!r})") from e
        if type(g) is float or type(g) is np.float64:   # the common answer (every hard stop's): float(g) is g's value
            g = float(g)
        else:
            try:
                g = float(np.asarray(g, dtype=float).reshape(()))
            except (TypeError, ValueError):
                raise ValueError(f"event {self.name!r}: guard must return one number, got {g!r}") from None
        if not math.isfinite(g):
            raise ValueError(f"event {self.name!r}: guard returned {g} at t = {float(t)!r}; expected a finite number")
        return g

    def crosses(self, g0: float, g1: float) -> bool:
        """Does the guard cross zero in this event's direction between values g0 and g1?  A guard exactly
        on zero at the start crosses when it moves to the side it fires on: a joint let go exactly on its
        stop (q = pos, its release) that rounding or another force turns back in was otherwise never
        seen again, and went through the stop (dm_control's humanoid: 1.5e-2 rad)."""
        down = (g0 > 0.0 and g1 <= 0.0) or (g0 == 0.0 and g1 < 0.0)
        up = (g0 < 0.0 and g1 >= 0.0) or (g0 == 0.0 and g1 > 0.0)
        return down if self.direction < 0 else up if self.direction > 0 else (down or up)

    def apply_reset(self, t, q, qd, nq, nv):
        """The reset map, checked: shapes (nq,), (nv,) and finite values."""
        if self.reset is None:
            return q, qd
        try:
            out = self.reset(t, q.copy(), qd.copy())
        except _NonFinite:
            raise
        except Exception as e:
            raise ValueError(f"event {self.name!r}: reset raised {type(e).__name__}: {e} (at t = {float(t)!r})") from e
        try:
            q1, qd1 = out
            q1 = np.array(q1, dtype=float).reshape(-1)
            qd1 = np.array(qd1, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ValueError(f"event {self.name!r}: reset must return (q, qd), got {type(out).__name__}") from None
        if q1.shape != (nq,) or qd1.shape != (nv,):
            raise ValueError(f"event {self.name!r}: reset returned q of shape {q1.shape} and qd of shape "
                             f"{qd1.shape}; expected ({nq},) and ({nv},)")
        if not (np.all(np.isfinite(q1)) and np.all(np.isfinite(qd1))):
            raise ValueError(f"event {self.name!r}: reset returned NaN or inf at t = {float(t)!r}")
        return q1, qd1


def check_events(events) -> tuple:
    """A tuple of :class:`Event` from one event or a sequence of them."""
    if events is None:
        return ()
    if isinstance(events, Event):
        return (events,)
    try:
        events = tuple(events)
    except TypeError:
        raise TypeError(f"events: expected an Event or a sequence of Events, got {type(events).__name__}") from None
    for i, e in enumerate(events):
        if not isinstance(e, Event):
            raise TypeError(f"events[{i}]: expected an mb.Event, got {type(e).__name__}")
    return events


def locate_crossing(g_of_t: Callable[[float], float], t0: float, t1: float, g0: float, g1: float,
                    tol: float = EVENT_TIME_TOL) -> float:
    """Time in (t0, t1] where a guard crosses zero, given values g0, g1 of opposite sign (or g1 = 0).

    Illinois (modified regula falsi) on the bracket, with bisection when it stalls; returns the
    bracket's far end ``b``: the guard has already crossed there, so a continuation from ``b``
    does not find the same crossing again.

    A guard exactly on zero at t0 (a joint let go on its stop) has crossed where it reaches g1's
    side: a point between still at zero, or off to the other side (the joint leaving before it is
    pressed back), has not.  Taken as crossed, every such point drew the bracket to t0 + tol, and
    Talos' arm, let go at q̈ = 2e-6 rad/s² away from its stop 2e-11 s before its feet pressed it
    back, met its stop 50 times in 1e-16 s ("fires forever").

    >>> round(locate_crossing(lambda t: t * (0.5 - t), 0.0, 1.0, 0.0, -0.5), 9)   # leaves, returns at 0.5
    0.5
    """
    a, b, fa, fb = t0, t1, g0, g1
    start_side = g0 if g0 != 0.0 else -g1     # the side a point has not crossed from
    side, width, inside = 0, b - a, False
    for it in range(400):
        if b - a <= tol:
            break
        if it % 3 == 0:
            width = b - a
        if it % 3 == 2 and b - a > 0.5 * width:  # not halved in two steps: bisect
            m = 0.5 * (a + b)
        elif fb == 0.0 and not inside:   # a probe on the crossing itself: one just inside closes the bracket
            m, inside = b - 0.5 * tol, True
        else:
            m = (a * fb - b * fa) / (fb - fa) if fb != fa else 0.5 * (a + b)
            if not a < m < b:
                m = 0.5 * (a + b)
            if it == 0:
                m = _toward_an_end(a, b, m)
        fm = g_of_t(m)
        if fm * start_side > 0.0 or (fm == 0.0 and g0 == 0.0):   # not crossed yet: it is in [m, b]
            a, fa = m, fm
            if side < 0:
                fb *= 0.5        # Illinois: the stale end's value is halved
            side = -1
        else:                    # crossed (or exactly zero) at m: the crossing is in [a, m]
            b, fb = m, fm
            if side > 0:
                fa *= 0.5
            side = 1
    return b


def _toward_an_end(a, b, m):
    """The probe for a secant point m within 1e-3 of the bracket [a, b]'s width from an end: the
    geometric mean of its distance and the width from that end instead.  A guard that starts at
    rest on its wall leaves it quadratically (a joint let go, or pressed, from q̇ = 0), and the
    secant through its end values then lands |g0 / g1| of the way in — 1e-13 of a step where the
    crossing is at 1e-6 of it — and Illinois crept from there: 80 guard evaluations (each a
    stepped state) per crossing, tiago_dual's fingers 636 crossings in its first millisecond.  The
    square root is exact for a quadratic from rest and overshoots a straight line, which then
    brackets the crossing within the probe.  Only the first probe: later secants near an end are
    Illinois converging, whose last point lands on the crossing (a run's derivative by finite
    differences needs its event times that smooth in the start, tests/test_sensitivities.py)."""
    w = b - a
    if m - a < 1e-3 * w:
        return a + w * math.sqrt((m - a) / w)
    if b - m < 1e-3 * w:
        return b - w * math.sqrt((b - m) / w)
    return m


class EventMonitor:
    """Watches a run's guards step by step and finds the earliest crossing in each step.

    After an event with a reset fires, the state sits on its guard (g ≈ 0).  The event is then
    *unarmed* until its guard is seen on the side it came from (positive for direction −1, negative
    for +1) at a step's start or end; a return to the wall within one step (a short bounce) is found
    by sampling the step on a dyadic grid for a point on that side.  If the state never leaves the guard, the reset
    cannot separate it from the wall and the event "fires forever": a ``ValueError`` says so.  An
    event that fires ZENO_COUNT times within ZENO_WINDOW seconds (Zeno motion) is the same error.

    A *time event* — a guard that does not read the state, such as ``0.3 − t`` ("kick at t = 0.3") —
    fires once where t crosses its zero: no reset can move its guard back, so a guard that stays past
    its zero after the reset is not a reset that cannot separate but the crossing being over.  Such
    a guard is recognised where the rule above would call it "fires forever" (:meth:`_time_only`:
    the same value at the state after its reset and at two states displaced from it); it is then
    *spent* — unarmed without an error, armed again when its guard returns to its side (a periodic
    guard fires each period), and it does not keep a fixed-step run out of the compiled loop
    (:meth:`blocks`).
    """

    SEARCH_DEPTH = 8   # a return within 1/256 of a step is treated as sticking to the guard

    def __init__(self, events, t, q, qd):
        self.events = events
        self.g = [ev.value(t, q, qd) for ev in events]
        self.armed = [True] * len(events)
        self.side = [0.0] * len(events)      # sign the guard must show to re-arm
        self.fired_at = [-math.inf] * len(events)
        self.history: dict[int, list[float]] = {}
        self.reset_state: dict[int, tuple] = {}   # event -> the state (q, q̇) its last reset left
        self.spent = [False] * len(events)        # a time event past its crossing (_time_only)

    def blocks(self, i):
        """Does unarmed event i need the run's steps taken one at a time (to see it re-arm or fire
        again)?  Not a spent time event: its guard stays past its zero whatever the state, and it fires
        again only after a return to its side, which a compiled stretch hands back as a crossing."""
        return not (self.armed[i] or self.spent[i])

    def _time_only(self, i, t, g):
        """Is event i's guard a function of time alone?  Probed once per firing, where the re-arm rule
        would call it "fires forever": its value ``g`` at t on the run's state, at the state its reset
        left (``reset_state``) and at two states displaced from that one by 0.1 (1 + |x|) per entry
        (either sign) must agree exactly.  A guard that reads the state (a wall at q = c) differs
        there; one that raises on a displaced state is taken as reading it."""
        if self.spent[i]:
            return True
        state = self.reset_state.get(i)
        if state is None:
            return False
        q, v = (np.asarray(x, dtype=float) for x in state)
        guard = self.events[i].guard
        try:
            probes = [guard(t, q, v)] + [guard(t, q + s * 0.1 * (1.0 + np.abs(q)), v + s * 0.1 * (1.0 + np.abs(v)))
                                         for s in (1.0, -1.0)]
            same = all(float(np.asarray(p, dtype=float).reshape(())) == g for p in probes)
        except Exception:   # (a guard that cannot read a displaced state reads the state)
            return False
        self.spent[i] = same
        return same

    def values(self, t, q, qd):
        """Every guard's value at one state, in the events' order."""
        return [ev.value(t, q, qd) for ev in self.events]

    def earliest(self, t0, t1, g_new, g_at, g_all=None):
        """(t_cross, index) of the earliest crossing in (t0, t1], or None; ``g_at(i, t)`` evaluates a guard,
        ``g_all(t)`` (optional) every guard at once — then a step cut by one event is looked at again
        at the cut (:meth:`_crossed_before`), where another armed guard may stand past its wall."""
        best, rearm = None, []
        for i, ev in enumerate(self.events):
            g0, g1 = self.g[i], g_new[i]
            if self.armed[i]:
                if not ev.crosses(g0, g1):
                    continue
                tc = self._locate(i, t0, t1, g0, g1, g_at, best)
            else:
                side = self.side[i]
                # exactly on its guard at the step's start, where a reset put it (a joint let go on its
                # stop), and off it by the end: a crossing from there is a new one (Event.crosses), so
                # the guard is watched from t0 (_crossed_before reads it at another event's cut).  The
                # state may dip past the guard first, or leave and come back: simple_humanoid's shoulder
                # and tiago's fingers were cut there 1e-10 rad into their stops, unarmed, and each
                # was called "fires forever" at the next step
                if g0 == 0.0 and g1 != 0.0 and ev.reset is not None:
                    rearm.append((i, t0, g0))
                if g1 * side > 0.0:      # left the guard by the end of the step: armed again
                    self.spent[i] = False
                    rearm.append((i, t0, g0) if g0 * side > 0.0 else (i, t1, g1))
                    continue
                if g0 == 0.0 and g1 == 0.0:   # held exactly on the guard (a joint resting on its stop, or
                    continue                  # let go from it with q̈ = 0: limits.JointLimits.release_guard)
                if g0 * side > 0.0:    # the step starts on its side (another event's reset moved it
                    tm, gm = t0, g0    # there): armed from the start
                elif g1 * side < 0.0 and self._time_only(i, t1, g1):
                    # a time event past its crossing: spent, not a reset that cannot separate; a return to
                    # its side within the step is looked for on its guard alone (no step re-taken)
                    q_r, v_r = self.reset_state[i]
                    tm, gm = self._search(i, t0, t1, lambda k, tt: self.events[k].value(tt, q_r, v_r),
                                          want_side=side)
                    if tm is None:
                        continue
                elif g0 == 0.0 and g1 * side < 0.0 and ev.reset is not None:
                    # exactly on its guard at the step's start (where a reset put it: a joint let go on its
                    # stop with q̈ ≈ 0) and into the side it fires on by the end: a new crossing from t0,
                    # whether the state left the guard first and came back or was driven back into its
                    # stop from rest (its impact, at rate 0) — not a reset that cannot separate it; one
                    # that returns at once is caught as Zeno (fired).  Located from t0 (a point still on
                    # zero or off to its side has not crossed), without the dyadic search for a point on
                    # its side, which only chose between those two ways to the same locate at up to 255
                    # stepped states (simple_humanoid's shoulder, let go at λ = 0 and back on its stop
                    # 0.4 µs later, hundreds of times a second)
                    tc = self._locate(i, t0, t1, g0, g1, g_at, best)
                    if tc is not None and (best is None or tc < best[0]):
                        best = (tc, i)
                    continue
                else:
                    tm, gm = self._search(i, t0, t1, g_at, want_side=side)
                if tm is None:
                    if t1 - self.fired_at[i] > 1e-9 * max(1.0, abs(t1)) and g1 * side < 0.0:
                        raise FiresForever(
                            f"event {ev.name!r} fires forever: after its reset at t = {float(self.fired_at[i])!r} the "
                            f"state does not leave the guard (g = {g1:.3g} at t = {float(t1)!r}); the reset must "
                            f"move the state off the guard (e.g. reverse the approach velocity), or the "
                            f"motion is Zeno (bounces of ever shorter flight)")
                    continue
                rearm.append((i, tm, gm))
                if not ev.crosses(gm, g1):
                    continue
                tc = self._locate(i, tm, t1, gm, g1, g_at, best)
            if tc is not None and (best is None or tc < best[0]):
                best = (tc, i)
        # Events seen off their guard (at tm) before the step's end — or, when another event fires in the
        # step, no later than its crossing — are armed again: the run reaches tm.  Re-arming only when no
        # event fired left a stop's release unarmed for good while other joints' impacts fired step
        # after step (dm_control's humanoid: 'abdomen_x upper limit release' at t = 5.67 s); one seen off
        # its guard only after the crossing is looked at again from the reset state (g0 above).
        if best is not None and g_all is not None and best[0] < t1:
            watched = [(i, t0, self.g[i]) for i in range(len(self.events)) if self.armed[i]] + rearm
            best = self._crossed_before(best, g_at, g_all, watched)
        t_cut = t1 if best is None else best[0]
        for i, tm, _ in rearm:
            if tm <= t_cut:
                self.armed[i] = True
        if best is not None:
            self.armed[best[1]] = True
        return best

    def _locate(self, i, ta, t1, ga, g1, g_at, best):
        """Where guard i, ``ga`` at ``ta`` and ``g1`` at t1, crosses in (ta, t1]; None where it has not
        crossed by the earliest crossing found so far (``best``), which it then cannot precede: one
        read at best's time (a state the step has taken) instead of a search to tolerance for a
        crossing that would not be used (tiago_dual's fingers crossed their stops together, ~19
        searches an event).  A guard that crosses and returns before best is then not seen at all,
        as at the step's end (g1 on its first side) — :meth:`_crossed_before` looks at the cut."""
        if best is not None and best[0] < t1:
            if ta >= best[0]:    # watched only from after best's crossing: it cannot precede it
                return None
            g_best = g_at(i, best[0])
            if not self.events[i].crosses(ga, g_best):
                return None
            t1, g1 = best[0], g_best
        return locate_crossing(lambda tt: g_at(i, tt), ta, t1, ga, g1)

    def _crossed_before(self, best, g_at, g_all, watched):
        """The earliest crossing once the step is cut at ``best``: a guard that crossed its wall and
        came back within the step (g_new on its first side again) is missed at the step's end, but a
        cut between its crossing and its return leaves the state past that wall — a joint up to 1e-2
        rad through its stop on dm_control's humanoid, where the limbs' stops fire many times a
        step.  So every guard watched in the step (``watched``: (index, armed from t, g there): armed
        at its start, or armed again within it) is read at the cut, and one that has crossed by then
        moves the cut back to its own crossing, until none has."""
        while True:
            g_cut = g_all(best[0])
            earlier = best
            for k, ta, ga in watched:
                ev = self.events[k]
                if k == best[1] or ta >= best[0] or not ev.crosses(ga, g_cut[k]):
                    continue
                tc = locate_crossing(lambda tt, k=k: g_at(k, tt), ta, best[0], ga, g_cut[k])
                if tc < earlier[0]:
                    earlier = (tc, k)
            if earlier is best:
                return best
            best = earlier

    def _search(self, i, t0, t1, g_at, want_side):
        """First point of a dyadic grid on (t0, t1) where guard i has the sign ``want_side``."""
        if want_side == 0.0:
            return None, None
        for depth in range(1, self.SEARCH_DEPTH + 1):
            n = 2 ** depth
            for k in range(1, n, 2):
                tt = t0 + (t1 - t0) * k / n
                g = g_at(i, tt)
                if g * want_side > 0.0:
                    return tt, g
        return None, None

    def fired(self, i, t, g_before, has_reset, state=None):
        """Bookkeeping after event i fired at t (its pre-crossing guard value g_before; ``state``: the
        state (q, q̇) its reset left, which :meth:`_time_only` probes)."""
        ev = self.events[i]
        self.spent[i] = False
        if state is not None:
            self.reset_state[i] = state
        if has_reset:
            self.armed[i] = False
            self.side[i] = (1.0 if ev.direction < 0 else -1.0 if ev.direction > 0
                            else (1.0 if g_before > 0 else -1.0))
            self.fired_at[i] = t
        h = self.history.setdefault(i, [])
        h.append(t)
        if len(h) > ZENO_COUNT:
            del h[0]
        if len(h) == ZENO_COUNT and h[-1] - h[0] <= ZENO_WINDOW * max(1.0, abs(t)):
            raise FiresForever(f"event {ev.name!r} fires forever: {ZENO_COUNT} times within {h[-1] - h[0]:.3g} s "
                             f"at t = {float(t)!r} (its reset leaves the state on the guard, or the motion is "
                             f"Zeno); change the reset or make the event terminal")
