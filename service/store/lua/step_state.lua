-- The open step's id and the engine state, read together (atomically): the fast order
-- path's read of a new step's state (`Store.step_state`), one command instead of a
-- MULTI/HGET/GET/EXEC transaction.
-- KEYS: phase, state
return {redis.call('HGET', KEYS[1], 'id'), redis.call('GET', KEYS[2])}
