-- Each round of a notify job (`Effects.open_notices`), in one atomic command: take the
-- game's notices lock for a new holder (as `lock_notices`), then read the notified mark and
-- the contacts; a holder with something to tell reads on, at the same moment: the former
-- contacts, the seats and the store's clock (`NoticesHead`), the events after the mark
-- through the one it was asked to tell (the stream's, and the archive's length:
-- `archive.read`), and the game's meta, open step and state (as `snapshot`). Four round
-- trips in one.
-- KEYS: 1 the lock, 2 meta, 3 contact, 4 gone, 5 seats, 6 events (stream), 7 archive,
--       8 phase, 9 state
-- ARGV: 1 the holder's token, 2 the lock's lease (ms), 3 the last event to tell,
--       4 the most events read here (more: the caller reads them)
-- Answers {locked 0/1, mark or false, contacts (flat)} and, when locked with events to
-- tell and someone to tell them to: gone (flat), seats (flat), {seconds, microseconds},
-- the events' XRANGE (or false when more than ARGV 4), the archive's length, meta (flat),
-- phase (flat), state or false.
local locked = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0
local mark = redis.call('HGET', KEYS[2], 'notified_through')
local contacts = redis.call('HGETALL', KEYS[3])
local first, last = tonumber(mark or '0') + 1, tonumber(ARGV[3])
if locked == 0 or first > last then
  return {locked, mark, contacts}
end
local gone = redis.call('HGETALL', KEYS[4])
if #contacts == 0 and #gone == 0 then
  return {locked, mark, contacts}
end
local events = false
if last - first < tonumber(ARGV[4]) then
  events = redis.call('XRANGE', KEYS[6], first .. '-1', last .. '-1')
end
return {locked, mark, contacts, gone, redis.call('HGETALL', KEYS[5]), redis.call('TIME'), events,
        redis.call('LLEN', KEYS[7]), redis.call('HGETALL', KEYS[2]), redis.call('HGETALL', KEYS[8]),
        redis.call('GET', KEYS[9])}
