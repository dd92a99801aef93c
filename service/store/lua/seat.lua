-- The host changes a seat: a bot, a new player key, a new name. The old key stops
-- working at once; orders it already signed and that were stored stay stored.
-- KEYS: seats, keys
-- ARGV: seat, new record (JSON), new kid ('' for none)
if ARGV[3] ~= '' then
  local holder = redis.call('HGET', KEYS[2], ARGV[3])
  if holder and holder ~= ARGV[1] then return {'key_in_use', holder} end
end
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local old = cjson.decode(current).kid
  if type(old) == 'string' and redis.call('HGET', KEYS[2], old) == ARGV[1] then
    redis.call('HDEL', KEYS[2], old)
  end
end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[3], ARGV[1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return {'ok', ARGV[1]}
