-- A seat out of time on a time bank (service/core/timebank.py): the decision the clock
-- made for it is stored as its order only when the seat has none (HSETNX: the seat's own
-- order, stored first, wins; a repeated check stores nothing), with the events that say
-- so, in one step; the step flips to `resolving` when every asked seat has answered (as
-- submit.lua). Checked again here: the step is the open one, collecting, not paused,
-- asks the seat, and the store's clock has reached the seat's own deadline; and the
-- step's opening banks and past pauses are those the deadline was worked out from (a
-- host's extension or a pause and resume since the read moved it: 'stale', read again).
-- KEYS: phase, orders of the step, meta, events
-- ARGV: 1 phase id, 2 seat, 3 order record (JSON), 4 the seat's own deadline (seconds),
--       5 the step's `banks` as read, 6 its `pauses` as read ('' for none),
--       7.. events (JSON, without id)
-- Answers {'stored' or 'trigger', last event number} or {'answered'|'early'|'paused'|'stale', ''}.
local ph = redis.call('HMGET', KEYS[1], 'id', 'status', 'expected', 'paused_at', 'banks', 'pauses')
if ph[1] ~= ARGV[1] or ph[2] ~= 'collecting' then return {'stale', ''} end
if ph[4] and ph[4] ~= '' then return {'paused', ''} end
if (ph[5] or '') ~= ARGV[5] or (ph[6] or '') ~= ARGV[6] then return {'stale', 'moved'} end
local expected = cjson.decode(ph[3])
local wanted = false
for _, s in ipairs(expected) do
  if tostring(s) == ARGV[2] then wanted = true end
end
if not wanted then return {'stale', ''} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
if now < tonumber(ARGV[4]) then return {'early', ''} end
if redis.call('HSETNX', KEYS[2], ARGV[2], ARGV[3]) == 0 then return {'answered', ''} end
local stamp = string.format('%.6f', now)
if redis.call('HEXISTS', KEYS[3], 'notified_through') == 0 then
  redis.call('HSET', KEYS[3], 'notified_through', redis.call('HGET', KEYS[3], 'event_seq') or '0')
end
local seq = 0
local ids = ids_open(KEYS[3])
for i = 7, #ARGV do
  seq = redis.call('HINCRBY', KEYS[3], 'event_seq', 1)
  local fields = {'e', ARGV[i], 'at', stamp}
  local v = ids_add(ids, ARGV[i])
  if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
  redis.call('XADD', KEYS[4], seq .. '-1', unpack(fields))
end
ids_close(KEYS[3], ids)
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), 'events')
if redis.call('HLEN', KEYS[2]) >= #expected then
  redis.call('HSET', KEYS[1], 'status', 'resolving', 'flipped_at', stamp)
  redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), 'resolving ' .. ARGV[1])
  return {'trigger', tostring(seq)}
end
return {'stored', tostring(seq)}
