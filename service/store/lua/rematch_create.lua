-- Create a rematch's game with every seat filled, all or nothing: its meta, the host's
-- key, each seat's record and key, and the contacts carried over from the finished game
-- (the game's keys only: its registry entry is written before this script and its listing
-- index entries after it, as for any game: `Games.create`).
-- KEYS: meta, keys, seats, contact
-- ARGV: game id, host kid, n (seats), then n times (seat, kid or '', record JSON),
--       m (contacts), then m times (seat, contact JSON), then the meta's field/value pairs
-- Answers 1, or 0 when the game exists already (nothing changed).
if redis.call('HSETNX', KEYS[1], 'id', ARGV[1]) == 0 then return 0 end
local i = 3
local n = tonumber(ARGV[i])
i = i + 1
for _ = 1, n do
  local seat, kid, rec = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  redis.call('HSET', KEYS[3], seat, rec)
  if kid ~= '' then redis.call('HSET', KEYS[2], kid, seat) end
  i = i + 3
end
local m = tonumber(ARGV[i])
i = i + 1
for _ = 1, m do
  redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
  i = i + 2
end
redis.call('HSET', KEYS[1], unpack(ARGV, i))
redis.call('HSET', KEYS[2], ARGV[2], 'host')
return 1
