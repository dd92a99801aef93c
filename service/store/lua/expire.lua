-- The deadline check: runs for the deadline job and the sweeper, and re-reads the
-- server clock (RQ's scheduler may fire early). Grants the one extension when the
-- game's policy has it, else flips the step to `resolving` with defaults.
-- A paused step (`paused_at` set: pause.lua) answers 'paused' and changes nothing; its
-- check is planned again when the host resumes (resume.lua moves the deadline).
-- KEYS: phase
-- ARGV: phase id, 'extend' or 'defaults', extension seconds
local id = redis.call('HGET', KEYS[1], 'id')
local status = redis.call('HGET', KEYS[1], 'status')
if id ~= ARGV[1] or status ~= 'collecting' then return {'noop', status or ''} end
local paused = redis.call('HGET', KEYS[1], 'paused_at')
if paused and paused ~= '' then return {'paused', paused} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local deadline = tonumber(redis.call('HGET', KEYS[1], 'deadline'))
if now < deadline then return {'early', string.format('%.6f', deadline)} end
if ARGV[2] == 'extend' and redis.call('HGET', KEYS[1], 'extended') ~= '1' then
  deadline = math.max(deadline, now) + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'deadline', string.format('%.6f', deadline), 'extended', '1')
  return {'extended', string.format('%.6f', deadline)}
end
redis.call('HSET', KEYS[1], 'status', 'resolving', 'defaults', '1',
  'flipped_at', string.format('%.6f', now))
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), 'resolving ' .. id)
return {'trigger', ''}
