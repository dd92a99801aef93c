-- Create a game: its meta and the host's key, all or nothing (the game's keys only: its
-- registry entry is written before this script, its listing index entries after it, each
-- in a call of its own, since they live in other slots; see `Games.create`).
-- KEYS: meta, keys
-- ARGV: game id, host kid, then the meta's field/value pairs
-- Answers 1, or 0 when the id exists already (nothing changed).
if redis.call('HSETNX', KEYS[1], 'id', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('HSET', KEYS[2], ARGV[2], 'host')
return 1
