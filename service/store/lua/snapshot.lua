-- A game's meta, open step and engine state with the store's clock, read together in one
-- command (`Games.snapshot_at`): a cluster refuses a keyless TIME in a pipeline, and one
-- script is one round trip and atomic, as the MULTI it replaces.
-- KEYS: meta, phase, state
-- Answers {meta (flat field/value list), phase (flat), state or nil, {seconds, microseconds}}.
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]), redis.call('GET', KEYS[3]),
        redis.call('TIME')}
