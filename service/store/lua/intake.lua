-- Everything an order needs read, in one atomic step: who holds the token's key (and
-- that seat's record), the game's status, title and host key, the open step, the
-- server clock, and the engine state unless the caller already holds the state of this
-- very step and version (commit.lua writes state and step id together; an action,
-- act.lua, writes the state and bumps the step's version `v` together).
-- KEYS: keys, seats, meta, phase, state
-- ARGV: kid, '<step id>.<version>' of the state the caller holds ('' for none)
local holder = redis.call('HGET', KEYS[1], ARGV[1])
local seat = false
if holder and holder ~= 'host' then seat = redis.call('HGET', KEYS[2], holder) end
local meta = redis.call('HMGET', KEYS[3], 'status', 'title', 'host_key')
local phase = redis.call('HGETALL', KEYS[4])
local t = redis.call('TIME')
local state = false
local held = redis.call('HMGET', KEYS[4], 'id', 'v')
if ARGV[2] == '' or not held[1] or (held[1] .. '.' .. (held[2] or '0')) ~= ARGV[2] then
  state = redis.call('GET', KEYS[5])
end
return {holder, seat, meta, phase, t, state}
