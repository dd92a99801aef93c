-- Take one lease of an open live stream, on the store's clock, unless `cap` leases are
-- held already (the concurrent stream caps, `service.core.live`).
-- KEYS: the ZSET of the open streams' leases (member: the stream's id, score: when its
--       lease ends; leases that ended are dropped, so a killed process leaks nothing):
--       one cap's (a game's or an address's, in different slots: one call per cap,
--       `Streams.take_stream_leases` gives back the first when the second refuses)
-- ARGV: member, lease (seconds), cap (0: take no lease, only renew: ZADD XX)
-- Answers 1 when the lease is taken (or renewed), 0 when the cap is reached.
local lease, cap = tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if cap == 0 then
  if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
    redis.call('ZADD', KEYS[1], 'XX', string.format('%.6f', now + lease), ARGV[1])
    redis.call('EXPIRE', KEYS[1], math.ceil(lease) + 1)
    return 1
  end
  return 0
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) == false and redis.call('ZCARD', KEYS[1]) >= cap then
  return 0
end
redis.call('ZADD', KEYS[1], string.format('%.6f', now + lease), ARGV[1])
redis.call('EXPIRE', KEYS[1], math.ceil(lease) + 1)
return 1
