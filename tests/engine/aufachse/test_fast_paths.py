"""The fast paths of the engine give exactly what the plain ones do: the distance lookup
(`Board.reach`) is the breadth-first `Board.distances`, the blocked check
(`movement.blocked`) is the plain test of every value, and the default's route
(`movement.Route`) is `best_path` on the whole distance lookup."""

from __future__ import annotations

import random
from typing import Any

from engine.aufachse.context import ctx_of, markers
from engine.aufachse.dataset import DEFAULT, load_data
from engine.aufachse.movement import Mover, Route, best_path, blocked
from engine.core.bots import play_game
from tests.engine.aufachse.helpers import GAME


def _states(games: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    bots = GAME.bots()
    for g in range(games):
        seats = 2 + g % 5
        b = {i: bots[("random", "planner")[(i + g) % 2]](f"fast/{g}/{i}") for i in range(seats)}
        play_game(GAME, seats, b, f"fast-{g}", {"kids": g % 3 == 2}, on_step=lambda s, o, e: out.append(s))
    return out


def test_the_distance_lookup_is_the_breadth_first_distances() -> None:
    board = load_data(DEFAULT).board
    rnd = random.Random(7)
    for _ in range(3000):
        sources = frozenset(rnd.sample(board.cities, rnd.choice([0, 1, 2, 3, 5])))
        marks = frozenset(rnd.sample(board.roads, rnd.choice([0, 1, 2, 2])))
        reach = board.reach(sources, marks)
        dist = board.distances(sources, marks)
        for x in rnd.sample(board.spaces, 40):
            assert reach.get(x) == dist.get(x), (sources, marks, x)


def test_the_blocked_check_is_the_plain_test_of_every_value() -> None:
    rnd = random.Random(3)
    for s in _states(4)[::5]:
        ctx = ctx_of(s)
        if s["over"] or any(p["at"] is None for p in s["players"]):
            continue
        for seat in range(s["seats"]):
            for _ in range(3):
                s2 = {**s, "roadworks": rnd.choice((None, *ctx.board.roads)), "jam": None}
                dice = [rnd.randint(1, 6), rnd.randint(1, 6)]
                m = Mover(ctx, s2, seat)
                ns = range(1, 7) if 6 in dice else set(dice)
                plain = not any(True for n in ns for _ in m.paths(n))
                assert blocked(ctx, s2, seat, dice) == plain, (seat, dice, markers(s2))


def test_the_default_route_is_the_best_path_on_the_whole_lookup() -> None:
    rnd = random.Random(11)
    checked = 0
    for s in _states(4)[::3]:
        ctx = ctx_of(s)
        board = ctx.board
        if s["over"] or any(p["at"] is None for p in s["players"]):
            continue
        for seat in range(s["seats"]):
            # markers anywhere (next to the truck too, so that it may wait), and on its space
            at = s["players"][seat]["at"]
            near = [y for y in board.adj[at] if y in board.road_of]
            rw = rnd.choice((None, *board.roads, *near, at if at in board.road_of else None))
            jam = rnd.choice((None, None, *board.roads, *near))
            s2 = {**s, "roadworks": rw, "jam": {"at": jam, "owner": 0, "turn": 0} if jam and jam != rw else None}
            sources = frozenset(rnd.sample(board.cities, rnd.choice([0, 1, 2, 3, 4, 6])))
            oc = set(rnd.sample(board.cities, 3))
            route = Route(ctx, s2, seat, sources, oc)
            lookup = board.reach(sources, markers(s2))
            for n in range(1, 7):
                assert route.path(n) == best_path(ctx, s2, seat, n, lookup, oc), (seat, n, sources, markers(s2))
                checked += 1
    assert checked > 500


def test_the_random_bots_view_is_the_seats_view_cut_to_what_it_reads() -> None:
    from engine.aufachse.bots import _View, reads
    from engine.core.info import strip

    cut = reads(GAME.information)
    assert reads(GAME.information) is cut
    for s in _states(3)[::7]:
        for seat in range(s["seats"]):
            whole = GAME.view(s, seat)
            view = strip(cut, s, seat, share=True)
            assert view.keys() <= {*_View.READS, "commitment"}
            assert {k: v for k, v in view.items() if k != "players"} == {k: whole[k] for k in view
                                                                        if k != "players"}
            assert {*_View.READS, "commitment"} & whole.keys() <= view.keys()
            for q, entry in enumerate(view["players"]):
                fields = set(_View.SEAT_READS) - ({"hand"} if q != seat and not s["over"] else set())
                assert entry == {k: v for k, v in whole["players"][q].items() if k in fields | {"hand_size"}}


def test_the_two_dice_words_are_the_streams_next_two_words() -> None:
    from engine.aufachse.dice import _two_words
    from engine.core.stream import new_stream, words

    rnd = random.Random(5)
    for k in range(400):
        stream = {**new_stream(f"dice-{k % 7}"), "used": rnd.choice((0, 24, 28, 32, 60, 3, 26, 29)) + 32 * (k % 9)}
        (x, y), after = words(stream, 2)
        assert _two_words(stream) == (x, y, after["used"]), stream
