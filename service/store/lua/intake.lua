-- Everything an order needs read, in one atomic step: who holds the token's key (and
-- that seat's record), the game's status, title and host key, the open step, the
-- server clock, and the engine state unless the caller already holds the state of this
-- very step (a step's state never changes: commit.lua writes state and step id together).
-- KEYS: keys, seats, meta, phase, state
-- ARGV: kid, the step id whose state the caller holds ('' for none)
local holder = redis.call('HGET', KEYS[1], ARGV[1])
local seat = false
if holder and holder ~= 'host' then seat = redis.call('HGET', KEYS[2], holder) end
local meta = redis.call('HMGET', KEYS[3], 'status', 'title', 'host_key')
local phase = redis.call('HGETALL', KEYS[4])
local t = redis.call('TIME')
local state = false
if ARGV[2] == '' or redis.call('HGET', KEYS[4], 'id') ~= ARGV[2] then
  state = redis.call('GET', KEYS[5])
end
return {holder, seat, meta, phase, t, state}
