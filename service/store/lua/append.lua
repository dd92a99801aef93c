-- Append events that are not a step's resolution (in-game messages) to the game's
-- stream, numbered after the last one (and counted for each viewer's ids: the prelude
-- numbering.lua). Refused once the game is over or before it exists.
-- KEYS: meta, events
-- ARGV: events (JSON, without id)
-- Answers {'ok', first number, last number, time stamp} or {'no_game'|'finished'}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'no_game'} end
if status == 'finished' then return {'finished'} end
local t = redis.call('TIME')
local stamp = string.format('%.6f', tonumber(t[1]) + tonumber(t[2]) / 1000000)
-- A game made before the notified mark existed has none: its earlier events were told then.
if redis.call('HEXISTS', KEYS[1], 'notified_through') == 0 then
  redis.call('HSET', KEYS[1], 'notified_through', redis.call('HGET', KEYS[1], 'event_seq') or '0')
end
local first = nil
local seq = 0
local ids = ids_open(KEYS[1])
for i = 1, #ARGV do
  seq = redis.call('HINCRBY', KEYS[1], 'event_seq', 1)
  if not first then first = seq end
  local fields = {'e', ARGV[i], 'at', stamp}
  local v = ids_add(ids, ARGV[i])
  if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
  redis.call('XADD', KEYS[2], seq .. '-1', unpack(fields))
end
ids_close(KEYS[1], ids)
redis.call('SPUBLISH', (string.gsub(KEYS[2], ':events$', ':live')), 'events')
return {'ok', tostring(first), tostring(seq), stamp}
