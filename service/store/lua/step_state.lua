-- The open step's id, its state version and the engine state, read together
-- (atomically): the fast order path's read of a new step's state (`Store.step_state`),
-- one command instead of a MULTI/HGET/GET/EXEC transaction.
-- KEYS: phase, state
local ph = redis.call('HMGET', KEYS[1], 'id', 'v')
return {ph[1], ph[2] or '0', redis.call('GET', KEYS[2])}
