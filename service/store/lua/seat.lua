-- The host changes a seat: a bot, a new player key, a new name. The old key stops
-- holding the seat at once (orders it already signed and that were stored stay stored)
-- and becomes a former key of the game: it still reads the game as the public does.
-- The game's live streams hear `seat <n>` (a stream of that seat re-checks its key and
-- closes when it no longer holds the seat: `service.core.live`).
-- KEYS: seats, keys, formers
-- ARGV: seat, new record (JSON), new kid ('' for none)
if ARGV[3] ~= '' then
  local holder = redis.call('HGET', KEYS[2], ARGV[3])
  if holder and holder ~= ARGV[1] then return {'key_in_use', holder} end
end
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local rec = cjson.decode(current)
  local old = rec.kid
  if type(old) == 'string' and redis.call('HGET', KEYS[2], old) == ARGV[1] then
    redis.call('HDEL', KEYS[2], old)
    if old ~= ARGV[3] and type(rec.public_key) == 'string' then
      redis.call('HSET', KEYS[3], old, cjson.encode({seat = tonumber(ARGV[1]), public_key = rec.public_key}))
    end
  end
end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[3])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('PUBLISH', (string.gsub(KEYS[1], ':seats$', ':live')), 'seat ' .. ARGV[1])
return {'ok', ARGV[1]}
