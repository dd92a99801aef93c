-- The day-before notice of a lobby game's expiry, once: append the public event
-- `lobby_closing` (with the time the game goes) and mark the meta (`closing_told`) in one
-- script, so a second sweeper or a second pass finds it told. The caller enqueues the
-- event's notices (`lobby.closing`, at once to every seat's contact; the host has none).
-- KEYS: meta, events
-- ARGV: ttl (seconds), lead (seconds before expiry), the event (JSON)
-- Answers {'told', event number} or {'kept', why}.
local m = redis.call('HMGET', KEYS[1], 'status', 'created_at', 'closing_told')
if not m[1] then return {'kept', 'no_game'} end
if m[1] ~= 'lobby' then return {'kept', 'started'} end
if m[3] then return {'kept', 'told'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local expires = tonumber(m[2]) + tonumber(ARGV[1])
if now < expires - tonumber(ARGV[2]) then return {'kept', 'early'} end
local stamp = string.format('%.6f', now)
local seq = redis.call('HINCRBY', KEYS[1], 'event_seq', 1)
redis.call('XADD', KEYS[2], seq .. '-1', 'e', ARGV[3], 'at', stamp)
redis.call('HSET', KEYS[1], 'closing_told', stamp)
redis.call('SPUBLISH', (string.gsub(KEYS[2], ':events$', ':live')), 'events')
return {'told', tostring(seq)}
