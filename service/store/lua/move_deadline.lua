-- Move an open step's deadline (the host's extension, an absence, a time bank): a
-- compare-and-set on the step id, its status `collecting` and, when given, the deadline
-- as it was read, so two moves (or a move and the step's resolution) never overwrite
-- each other. Fields of the step hash can be set in the same write.
-- KEYS: phase
-- ARGV: 1 phase id, 2 the new deadline (seconds since the epoch), 3 the deadline as read
--       ('' for any), 4.. field, value pairs to set in the step hash too
-- Answers {'moved', deadline} or {'stale', status} (another step, not collecting, or the
-- deadline moved since it was read).
local ph = redis.call('HMGET', KEYS[1], 'id', 'status', 'deadline')
if ph[1] ~= ARGV[1] or ph[2] ~= 'collecting' then return {'stale', ph[2] or ''} end
if ARGV[3] ~= '' and tonumber(ph[3]) ~= tonumber(ARGV[3]) then return {'stale', 'moved'} end
local deadline = string.format('%.6f', tonumber(ARGV[2]))
redis.call('HSET', KEYS[1], 'deadline', deadline)
for i = 4, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), 'deadline ' .. ARGV[1])
return {'moved', deadline}
