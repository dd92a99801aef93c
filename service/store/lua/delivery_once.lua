-- Store a delivery record under an id derived from what it tells (see
-- `service.channels.notify`), unless one is there already: a notify job that runs
-- twice, or again after a crash, makes no second delivery.
-- KEYS: delivery (HASH), deliveries of the seat (LIST)
-- ARGV: 1 delivery id  2 record (JSON)  3 how many ids the seat's list keeps
-- Answers {1, record} when stored now, {0, stored record} when it was there.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
  return {0, redis.call('HGET', KEYS[1], ARGV[1])}
end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
return {1, ARGV[2]}
