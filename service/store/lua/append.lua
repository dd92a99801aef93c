-- Append events that are not a step's resolution (in-game messages) to the game's
-- stream, numbered after the last one. Refused once the game is over or before it exists.
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
for i = 1, #ARGV do
  seq = redis.call('HINCRBY', KEYS[1], 'event_seq', 1)
  if not first then first = seq end
  redis.call('XADD', KEYS[2], seq .. '-1', 'e', ARGV[i], 'at', stamp)
end
redis.call('PUBLISH', (string.gsub(KEYS[2], ':events$', ':live')), 'events')
return {'ok', tostring(first), tostring(seq), stamp}
