-- Take one slot of a seat's sliding-window message limit, on the store's clock.
-- KEYS: the ZSET of the seat's recent message times (member: a unique id, score: time)
-- ARGV: window (seconds), rate (messages per window), member
-- Answers {'1', '0'} when the slot was taken, or {'0', seconds until one frees up}:
-- a refusal adds nothing, so it does not count against the seat.
local window, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= rate then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  local frees = oldest[2] and (tonumber(oldest[2]) + window - now) or window
  return {'0', string.format('%.3f', frees)}
end
redis.call('ZADD', KEYS[1], string.format('%.6f', now), ARGV[3])
redis.call('EXPIRE', KEYS[1], math.ceil(window) + 1)
return {'1', '0'}
