-- A lobby game's expiry (`Games.purge_expired`): remove a game that never started once
-- `created_at + ttl` has passed on the store's clock, with every key it has, its entries
-- in the registry, the listing indexes, the running set and the digest schedule, and the
-- Idempotency-Key records whose answer is about it. All or nothing, so a join racing it
-- either lands before (and goes with the game) or finds no game.
-- KEYS: 1 meta, 2 idem (SET of record keys), 3 registry, 4 running set, 5 digest schedule,
--       6..9 the game's buckets of the lobby, running, finished and all indexes,
--       10.. every other key of the game (`Keys.game_keys`)
-- ARGV: game id, ttl (seconds), seats
-- Answers {'expired'} or {'kept', why}: 'no_game', 'started', 'early <expires_at>'.
local m = redis.call('HMGET', KEYS[1], 'status', 'created_at')
if not m[1] then return {'kept', 'no_game'} end
if m[1] ~= 'lobby' then return {'kept', 'started'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local expires = tonumber(m[2]) + tonumber(ARGV[2])
if now < expires then return {'kept', string.format('early %.6f', expires)} end
local records = redis.call('SMEMBERS', KEYS[2])
for _, k in ipairs(records) do redis.call('DEL', k) end
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[4], ARGV[1])
for s = 0, tonumber(ARGV[3]) - 1 do redis.call('ZREM', KEYS[5], ARGV[1] .. ':' .. s) end
for i = 6, 9 do redis.call('ZREM', KEYS[i], ARGV[1]) end
redis.call('DEL', KEYS[1], KEYS[2])
for i = 10, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':meta$', ':live')), 'commit')
return {'expired'}
