-- Replace a seat's absences (issue 25, `service.core.absence`): a compare-and-set on
-- the seat's list as it was read, so two writers (the seat's request and the tell of
-- an ended absence) never overwrite each other.
-- KEYS: absences
-- ARGV: 1 seat, 2 the list as read ('' for none), 3 the new list ('' for none)
-- Answers {'ok'} or {'moved'} (read again).
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[2] then return {'moved'} end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return {'ok'}
