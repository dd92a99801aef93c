"""Contract tests: every registered title honours the engine contract of
shared/guides/architecture.md, for every seat count it accepts.

The tests are generic: they only use the `Game` interface (plus the title's bots when its
package ships a `BOTS` table, else default orders), so a new title is covered the moment
it registers.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.core import Game, IllegalOrder, OptionsError, Request, titles
from engine.core.bots import replay

#: A seed large enough that it cannot turn up in a view by chance.
SEED = 918_273_645_546_372_819
MAX_STEPS = 20_000


def _title_seats() -> list[Any]:
    return [
        pytest.param(tid, n, id=f"{tid}-{n}")
        for tid, game in sorted(titles().items())
        for n in range(game.min_seats, game.max_seats + 1)
    ]


def _variants(game: Game) -> list[dict[str, Any]]:
    """The default options, then each enumerated or boolean option moved off its default."""
    out: list[dict[str, Any]] = [{}]
    for key, spec in game.options.items():
        if spec.choices:
            out += [{key: c} for c in spec.choices if c != spec.default]
        elif spec.type == "boolean":
            out.append({key: not spec.default})
    return out


def _title_seats_variants() -> list[Any]:
    return [
        pytest.param(tid, n, opts, id=f"{tid}-{n}-{json.dumps(opts, sort_keys=True)}")
        for tid, game in sorted(titles().items())
        for n in range(game.min_seats, game.max_seats + 1)
        for opts in _variants(game)
    ]


TITLE_SEATS = _title_seats()
TITLE_SEATS_VARIANTS = _title_seats_variants()
TITLE_IDS = sorted(titles())


def dumps(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def keys_anywhere(x: Any) -> Iterator[str]:
    """Every dict key at any depth of plain JSON data."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from keys_anywhere(v)
    elif isinstance(x, list):
        for v in x:
            yield from keys_anywhere(v)


class DefaultBot:
    def order(self, game: Game, state: dict[str, Any], request: Request) -> dict[str, Any]:
        return game.default_order(state, request.seat)


def bots_for(game: Game, seats: int, seed: int) -> dict[int, Any]:
    """The title's own bots (one of each kind in turn), else default orders."""
    table = game.bots()
    kinds = [table[k] for k in sorted(table)]
    if not kinds:
        return {p: DefaultBot() for p in range(seats)}
    return {p: kinds[(p + seed) % len(kinds)](f"{seed}:{p}") for p in range(seats)}


def expect_illegal(game: Game, state: dict[str, Any], seat: Any, order: Any, code: str | None = None) -> str:
    """`validate` refuses `order` with a registered code (`code` if given) and leaves the
    state untouched; returns the code."""
    before = dumps(state)
    with pytest.raises(IllegalOrder) as info:
        game.validate(state, seat, order)
    assert info.value.code in game.all_order_codes(), info.value.code
    if code is not None:
        assert info.value.code == code, (info.value.code, info.value.message, order)
    assert isinstance(info.value.message, str) and info.value.message
    assert dumps(state) == before, "validate touched the state"
    return info.value.code


# -- metadata and options -------------------------------------------------------------------
@pytest.mark.parametrize("tid", TITLE_IDS)
def test_catalog_entry_names_id_seats_options_bots_and_codes(tid: str) -> None:
    game = titles()[tid]
    d = game.catalog_entry()
    assert d["bots"] == sorted(game.bots()) and d["bots"]
    assert {"not_your_turn", "malformed_order", "wrong_kind", "game_over"} <= set(d["order_codes"])
    assert d["id"] == tid == game.id
    assert isinstance(d["name"], str) and d["name"]
    assert d["seats"] == {"min": game.min_seats, "max": game.max_seats}
    assert 1 <= game.min_seats <= game.max_seats
    assert set(d["options"]) == set(game.options)
    for key, spec in d["options"].items():
        assert {"type", "default", "help", "choices"} <= set(spec), key
        assert isinstance(spec["help"], str) and spec["help"], key
        if spec["choices"]:
            assert spec["default"] in spec["choices"], key
    assert json.loads(json.dumps(d)) == d


@pytest.mark.parametrize("tid", TITLE_IDS)
def test_bad_seat_counts_raise_options_error(tid: str) -> None:
    game = titles()[tid]
    for seats in (game.min_seats - 1, game.max_seats + 1, 0, -1, None, "2", 2.0):
        with pytest.raises(OptionsError):
            game.setup(seats, {}, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("tid", TITLE_IDS)
def test_unknown_and_bad_options_raise_options_error(tid: str) -> None:
    game = titles()[tid]
    n = game.min_seats
    with pytest.raises(OptionsError):
        game.setup(n, {"no_such_option_zz": 1}, 1)
    with pytest.raises(OptionsError):
        game.setup(n, {"NO_SUCH": True, **{k: o.default for k, o in game.options.items()}}, 1)
    for key, spec in game.options.items():
        if spec.choices:
            with pytest.raises(OptionsError):
                game.setup(n, {key: "definitely-not-a-choice"}, 1)
        if spec.type == "boolean":
            with pytest.raises(OptionsError):
                game.setup(n, {key: "yes"}, 1)


@pytest.mark.parametrize(("tid", "seats"), TITLE_SEATS)
def test_setup_is_deterministic_for_a_seed(tid: str, seats: int) -> None:
    game = titles()[tid]
    for seed in (0, 7, "some text seed", SEED):
        a, b = game.setup(seats, {}, seed), game.setup(seats, {}, seed)
        assert dumps(a) == dumps(b)
        assert json.loads(json.dumps(a)) == a, "the initial state does not round-trip through JSON"
    # explicit defaults are the same game as no options
    defaults = {k: o.default for k, o in game.options.items()}
    assert dumps(game.setup(seats, defaults, 5)) == dumps(game.setup(seats, None, 5))


# -- a whole game, checking the contract at every step -----------------------------------
GARBAGE: list[Any] = [{"nonsense": 1}, [], [{"nonsense": 1}], "order", 42, None, {"kind": "no_such_kind_zz"}]


def check_view(game: Game, state: dict[str, Any], viewer: Any) -> dict[str, Any]:
    v = game.view(state, viewer)
    text = json.dumps(v)
    assert json.loads(text) == v, f"view({viewer!r}) is not plain JSON"
    assert "rng" not in set(keys_anywhere(v)), f"view({viewer!r}) shows the RNG"
    if "rng" in state:
        assert str(state["rng"]) not in text, f"view({viewer!r}) shows the RNG state"
    assert str(SEED) not in text, f"view({viewer!r}) shows the seed"
    return v


def check_events(events: list[dict[str, Any]], seats: int) -> None:
    assert json.loads(json.dumps(events)) == events
    for e in events:
        assert isinstance(e["type"], str) and e["type"]
        vis = e["visible_to"]
        assert vis == "all" or (isinstance(vis, list) and all(isinstance(p, int) and 0 <= p < seats for p in vis)), e
        assert str(SEED) not in json.dumps(e)


def check_open_step(game: Game, state: dict[str, Any], requests: list[Request], seats: int) -> None:
    before = dumps(state)
    assert requests, "requests() is empty while result() is None"
    asked = [r.seat for r in requests]
    assert len(set(asked)) == len(asked), f"a seat is asked twice: {asked}"
    assert all(isinstance(p, int) and 0 <= p < seats for p in asked), asked
    assert len({r.step for r in requests}) == 1, "requests of one step name different steps"
    assert len({r.kind for r in requests}) == 1, "one step asks for different order kinds"
    if "step" in state:
        assert requests[0].step == state["step"]
    for r in requests:
        assert isinstance(r.kind, str) and r.kind
        assert isinstance(r.sealed, bool)
        d = r.as_dict()
        assert json.loads(json.dumps(d)) == d, "a request's choices are not plain JSON"
        # the default order is always legal
        default = game.default_order(state, r.seat)
        assert json.loads(json.dumps(default)) == default
        game.validate(state, r.seat, default)
    if len(requests) > 1:
        assert all(r.sealed for r in requests), "a step asking several seats must be sealed"
    # garbage is refused with a registered code, without touching the state
    seat = requests[0].seat
    for junk in GARBAGE:
        expect_illegal(game, state, seat, junk)
    try:
        game.validate(state, seat, {})
    except IllegalOrder as exc:  # {} may be legal (all defaults); if not, a clean refusal
        assert exc.code in game.all_order_codes()
    # seats not asked now (and seats that do not exist) are not_your_turn
    default = game.default_order(state, seat)
    for other in [p for p in range(seats) if p not in asked] + [-1, seats, seats + 5]:
        expect_illegal(game, state, other, default, "not_your_turn")
        expect_illegal(game, state, other, {"nonsense": 1}, "not_your_turn")
    # an incomplete set of orders is refused by the shared step helper
    with pytest.raises(IllegalOrder) as info:
        game.step(state, {})
    assert info.value.code == "not_your_turn"
    assert dumps(state) == before


def walk(game: Game, seats: int, options: dict[str, Any], seed: int) -> tuple[dict[str, Any], list[dict[int, Any]]]:
    """Play a bot game, checking the contract at every step; returns the final state and
    the accepted orders."""
    state = game.setup(seats, options, seed)
    bots = bots_for(game, seats, seed)
    steps: list[dict[int, Any]] = []
    last_step = None
    for _ in range(MAX_STEPS):
        text = dumps(state)
        assert dumps(json.loads(json.dumps(state))) == text, "the state does not round-trip through JSON"
        assert json.loads(json.dumps(state)) == state
        for viewer in [*range(seats), "public", "admin"]:
            check_view(game, state, viewer)
        requests = game.requests(state)
        if game.result(state) is not None:
            break
        check_open_step(game, state, requests, seats)
        if last_step is not None:
            assert requests[0].step > last_step, "the step number did not advance"
        last_step = requests[0].step
        orders = {r.seat: bots[r.seat].order(game, state, r) for r in requests}
        orders_text = dumps({str(k): v for k, v in orders.items()})
        new, events = game.resolve(state, orders)
        assert dumps(state) == text, "resolve mutated its input state"
        assert dumps({str(k): v for k, v in orders.items()}) == orders_text, "resolve mutated the orders"
        assert new is not state
        check_events(events, seats)
        # resolving the same orders again gives the same result (pure and deterministic)
        again, events_again = game.resolve(state, orders)
        assert dumps(again) == dumps(new) and dumps(events_again) == dumps(events)
        steps.append(orders)
        state = new
    else:
        raise AssertionError(f"no result within {MAX_STEPS} steps")
    return state, steps


@pytest.mark.parametrize(("tid", "seats", "options"), TITLE_SEATS_VARIANTS)
def test_a_bot_game_keeps_the_contract_at_every_step(tid: str, seats: int, options: dict[str, Any]) -> None:
    game = titles()[tid]
    state, steps = walk(game, seats, options, SEED)
    assert steps, "the game ended before anybody acted"

    # the end: a ranking covering every seat once, nobody asked, every order game_over
    ranking = game.result(state)
    assert isinstance(ranking, list)
    assert sorted(r["seat"] for r in ranking) == list(range(seats))
    places = [r["place"] for r in ranking]
    assert places[0] == 1 and places == sorted(places), places
    assert all(1 <= p <= seats for p in places)
    assert json.loads(json.dumps(ranking)) == ranking
    assert game.requests(state) == []
    last_orders = steps[-1]
    for seat in [*range(seats), -1]:
        expect_illegal(game, state, seat, {}, "game_over")
        for order in last_orders.values():
            expect_illegal(game, state, seat, order, "game_over")
    with pytest.raises(IllegalOrder) as info:
        game.step(state, last_orders)
    assert info.value.code == "game_over"
    with pytest.raises(IllegalOrder) as info:
        game.resolve(state, last_orders)
    assert info.value.code == "game_over"

    # replaying the accepted orders from the seed rebuilds the same state byte for byte
    assert dumps(replay(game, seats, SEED, options, steps)) == dumps(state)


@pytest.mark.parametrize(("tid", "seats"), TITLE_SEATS)
def test_result_is_none_until_the_end_on_default_orders(tid: str, seats: int) -> None:
    game = titles()[tid]
    state = game.setup(seats, {}, 11)
    for _ in range(MAX_STEPS):
        requests = game.requests(state)
        if not requests:
            break
        assert game.result(state) is None
        state, _ = game.step(state, {r.seat: game.default_order(state, r.seat) for r in requests})
    ranking = game.result(state)
    assert ranking is not None
    assert sorted(r["seat"] for r in ranking) == list(range(seats))


@pytest.mark.parametrize(("tid", "seats", "options"), TITLE_SEATS_VARIANTS)
def test_no_state_a_resolve_was_given_ever_changes_later(tid: str, seats: int, options: dict[str, Any]) -> None:
    """Callers keep and share states (caches, replays, notices): a resolve may share parts
    of the state it was given with the one it returns, but nothing done later — resolving
    that new state, validating, asking for requests, defaults or views — may change an
    earlier state, or the events and requests already handed out."""
    game = titles()[tid]
    bots = bots_for(game, seats, SEED)
    state = game.setup(seats, options, SEED)
    kept: list[tuple[Any, str]] = []
    for _ in range(MAX_STEPS):
        requests = game.requests(state)
        kept.append((state, dumps(state)))
        kept.append(([r.as_dict() for r in requests], dumps([r.as_dict() for r in requests])))
        if not requests:
            break
        for r in requests:
            game.default_order(state, r.seat)
        game.view(state, requests[0].seat)
        orders = {r.seat: bots[r.seat].order(game, state, r) for r in requests}
        by_seat = {str(k): v for k, v in orders.items()}  # the same order objects, JSON keys
        kept.append((by_seat, dumps(by_seat)))
        # the bot loop's path: every order has just passed validate
        state, events = game.resolve_validated(state, orders)
        kept.append((events, dumps(events)))
    else:
        raise AssertionError(f"no result within {MAX_STEPS} steps")
    changed = [i for i, (data, text) in enumerate(kept) if dumps(data) != text]
    assert not changed, (f"{len(changed)} earlier states, orders, requests or events changed later "
                         f"(first: #{changed[0]})")


@pytest.mark.parametrize("tid", TITLE_IDS)
def test_orders_may_be_any_mapping(tid: str) -> None:
    """`resolve` takes orders as mappings: a read-only one resolves like a plain dict."""
    from types import MappingProxyType

    game = titles()[tid]
    state = game.setup(game.max_seats, {}, SEED)
    for _ in range(30):
        requests = game.requests(state)
        if not requests:
            break
        orders = {r.seat: game.default_order(state, r.seat) for r in requests}
        new, events = game.resolve(state, orders)
        frozen, frozen_events = game.resolve(state, {k: MappingProxyType(v) for k, v in orders.items()})
        assert dumps(frozen) == dumps(new) and dumps(frozen_events) == dumps(events)
        state = new
