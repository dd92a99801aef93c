-- The host changes a seat: a bot, a new player key, a new name. The old key stops
-- holding the seat at once (orders it already signed and that were stored stay stored)
-- and becomes a former key of the game: it still reads the game as the public does.
-- The game's live streams hear `seat <n>` (a stream of that seat re-checks its key and
-- closes when it no longer holds the seat: `service.core.live`).
-- The seat's contact belongs to the holder who set it: when the holder changes (another
-- key, a bot) it leaves the seat in the same step. In a running game it becomes a former
-- contact (`gone`), told once by the notify job that the seat was handed on and nothing
-- after (the seat's `contact` holds a mark of it meanwhile); `through` is the last event before the change (a contact with no recorded kid,
-- written before contacts were bound, goes the same way). In the lobby nothing was told
-- yet: it is dropped.
-- KEYS: seats, keys, formers, contact, gone, meta
-- ARGV: seat, new record (JSON), new kid ('' for none)
if ARGV[3] ~= '' then
  local holder = redis.call('HGET', KEYS[2], ARGV[3])
  if holder and holder ~= ARGV[1] then return {'key_in_use', holder} end
end
local current = redis.call('HGET', KEYS[1], ARGV[1])
local old, name = '', nil
if current then
  local rec = cjson.decode(current)
  if type(rec.kid) == 'string' then old = rec.kid end
  if type(rec.name) == 'string' then name = rec.name end
  if old ~= '' and redis.call('HGET', KEYS[2], old) == ARGV[1] then
    redis.call('HDEL', KEYS[2], old)
    if old ~= ARGV[3] and type(rec.public_key) == 'string' then
      redis.call('HSET', KEYS[3], old, cjson.encode({seat = tonumber(ARGV[1]), public_key = rec.public_key}))
    end
  end
end
if old ~= ARGV[3] then
  local contact = redis.call('HGET', KEYS[4], ARGV[1])
  if contact then
    redis.call('HDEL', KEYS[4], ARGV[1])
    if redis.call('HGET', KEYS[6], 'status') == 'running' then
      local field = ARGV[1] .. ':' .. tostring(redis.call('HLEN', KEYS[5]))
      local gone = {seat = tonumber(ARGV[1]), kid = old, name = name, contact = contact, told = false,
                    through = tonumber(redis.call('HGET', KEYS[6], 'event_seq') or '0')}
      redis.call('HSET', KEYS[5], field, cjson.encode(gone))
      -- Until the farewell is made, the seat keeps a mark in `contact` that is nobody's
      -- contact (no holder's kid) but keeps the game's "somebody is to be told" (a game
      -- without contacts moves its notified mark past every event, the farewell's too).
      redis.call('HSET', KEYS[4], ARGV[1], cjson.encode({gone = field, kid = '-'}))
    end
  end
end
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[3])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':seats$', ':live')), 'seat ' .. ARGV[1])
return {'ok', ARGV[1]}
