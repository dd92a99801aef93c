-- Create a game: its meta, the host's key, and its entries in the games registry and
-- in the listing indexes (`all` and `lobby`, its bucket of each), all or nothing.
-- KEYS: meta, keys, the games registry, the game's bucket of the `all` index, of the `lobby` index
-- ARGV: game id, host kid, created_at, then the meta's field/value pairs
-- Answers 1, or 0 when the id exists already (nothing changed).
if redis.call('HSETNX', KEYS[1], 'id', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('HSET', KEYS[2], ARGV[2], 'host')
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
return 1
