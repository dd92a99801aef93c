-- Tell a finished game that its rematch has started, once: append the public event
-- `rematch_started` (numbered like any event: the prelude numbering.lua) and mark the
-- meta (`rematch_told`) in one script, so a second request, a racing one or the sweep
-- finds it told. A finished game takes no other event (append.lua refuses it); this one
-- is its last. The caller enqueues the event's notices (`rematch.started`).
-- KEYS: meta, events
-- ARGV: the new game's id (must be the claimed one), the event (JSON)
-- Answers {'told', event number} or {'kept', why}.
local m = redis.call('HMGET', KEYS[1], 'status', 'rematch', 'rematch_told')
if not m[1] then return {'kept', 'no_game'} end
if m[2] ~= ARGV[1] then return {'kept', 'other'} end
if m[3] then return {'kept', 'told'} end
if redis.call('HEXISTS', KEYS[1], 'notified_through') == 0 then
  redis.call('HSET', KEYS[1], 'notified_through', redis.call('HGET', KEYS[1], 'event_seq') or '0')
end
local t = redis.call('TIME')
local stamp = string.format('%.6f', tonumber(t[1]) + tonumber(t[2]) / 1000000)
local ids = ids_open(KEYS[1])
local seq = redis.call('HINCRBY', KEYS[1], 'event_seq', 1)
local fields = {'e', ARGV[2], 'at', stamp}
local v = ids_add(ids, ARGV[2])
if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
redis.call('XADD', KEYS[2], seq .. '-1', unpack(fields))
ids_close(KEYS[1], ids)
redis.call('HSET', KEYS[1], 'rematch_told', stamp)
redis.call('SPUBLISH', (string.gsub(KEYS[2], ':events$', ':live')), 'events')
return {'told', tostring(seq)}
