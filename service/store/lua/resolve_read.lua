-- What resolving a step reads (`Games.resolve_read`), in one command: the game's meta,
-- its open step, its engine state and the step's stored orders (the step is `resolving`:
-- no order can come in meanwhile, the orders hash is closed).
-- KEYS: meta, phase, state, orders of the step
-- Answers {meta (flat field/value list), phase (flat), state or nil, orders (flat)}.
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('GET', KEYS[3]),
        redis.call('HGETALL', KEYS[4])}
