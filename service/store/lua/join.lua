-- Take a seat in the lobby (the first free one, or the one asked for).
-- KEYS: meta, seats, keys
-- ARGV: seat ('' for the first free), seat record (JSON), kid, the lobby's time to live
--       (seconds from creation; joining does not renew it)
local m = redis.call('HMGET', KEYS[1], 'status', 'created_at')
if not m[1] then return {'no_game', ''} end
if m[1] ~= 'lobby' then return {'started', ''} end
local t = redis.call('TIME')
if m[2] and tonumber(t[1]) + tonumber(t[2]) / 1000000 >= tonumber(m[2]) + tonumber(ARGV[4]) then
  return {'game_expired', ''}
end
local taken = redis.call('HGET', KEYS[3], ARGV[3])
if taken then return {'key_in_use', taken} end
local n = tonumber(redis.call('HGET', KEYS[1], 'seats'))
local seat = -1
if ARGV[1] ~= '' then
  seat = tonumber(ARGV[1])
  if seat < 0 or seat >= n then return {'no_such_seat', ''} end
  if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return {'seat_taken', ARGV[1]} end
else
  for i = 0, n - 1 do
    if redis.call('HEXISTS', KEYS[2], tostring(i)) == 0 then seat = i; break end
  end
  if seat < 0 then return {'game_full', ''} end
end
redis.call('HSET', KEYS[2], tostring(seat), ARGV[2])
redis.call('HSET', KEYS[3], ARGV[3], tostring(seat))
return {'joined', tostring(seat)}
