-- A lobby game's expiry (`Games.purge_expired`): remove a game that never started once
-- `created_at + ttl` has passed on the store's clock, with every key it has but `idem`.
-- All or nothing, so a join racing it either lands before (and goes with the game) or
-- finds no game. The game's keys only: its entries in the registry, the listing indexes,
-- the running set and the digest schedule and the Idempotency-Key records whose answer is
-- about it are other slots, removed after this script (`Games.forget`), the `idem` set
-- (the names of those records) last but the registry entry; a crash in between is
-- finished by the next sweep (the lobby expiry finds `no_game` and forgets it again; the
-- registry's repair forgets a registered game without a meta).
-- KEYS: 1 meta, 2 idem (SET of record keys: kept), 3.. every other key of the game (`Keys.game_keys`)
-- ARGV: ttl (seconds)
-- Answers {'expired'} or {'kept', why}: 'no_game', 'started', 'early <expires_at>'.
local m = redis.call('HMGET', KEYS[1], 'status', 'created_at')
if not m[1] then return {'kept', 'no_game'} end
if m[1] ~= 'lobby' then return {'kept', 'started'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local expires = tonumber(m[2]) + tonumber(ARGV[1])
if now < expires then return {'kept', string.format('early %.6f', expires)} end
redis.call('DEL', KEYS[1])
for i = 3, #KEYS do redis.call('DEL', KEYS[i]) end
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':meta$', ':live')), 'commit')
return {'expired'}
