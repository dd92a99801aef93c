-- Let go of a game's notices lock (`Effects.lock_notices`) if this holder still has it,
-- and answer what is left to tell, in the same atomic step: {event_seq, notified_through}.
-- A job that found the lock taken left its events to the holder, so the holder looks
-- again after letting go (no event is left behind between the two).
-- KEYS: the lock, meta
-- ARGV: 1 the holder's token
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
local m = redis.call('HMGET', KEYS[2], 'event_seq', 'notified_through')
return {m[1] or '0', m[2] or m[1] or '0'}
