-- The host pauses the game (`service.core.hosting`): the open step's clock stops. A
-- compare-and-set on the step as it stands: it must be collecting and not paused
-- already. Sets the step hash's `paused_at` (the store's TIME) and leaves the deadline
-- as it is: resume.lua moves it on by exactly the time paused. While `paused_at` is
-- set, the deadline check (expire.lua) answers `paused`, and no order flips the step
-- (submit.lua, order.lua): the last order is stored, and resume flips the step.
-- KEYS: meta, phase
-- Answers {'ok', step id, paused_at, deadline}, {'paused', step id, paused_at} (paused
-- already), {'locked', step id} (resolving: try again), or the game's status
-- ({'no_game'}, {'lobby'}, {'finished'}).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'no_game'} end
if status ~= 'running' then return {status} end
local ph = redis.call('HMGET', KEYS[2], 'id', 'status', 'deadline', 'paused_at')
if not ph[1] or ph[2] == 'finished' then return {'finished'} end
if ph[4] and ph[4] ~= '' then return {'paused', ph[1], ph[4]} end
if ph[2] ~= 'collecting' then return {'locked', ph[1]} end
local t = redis.call('TIME')
local stamp = string.format('%d.%06d', tonumber(t[1]), tonumber(t[2]))
redis.call('HSET', KEYS[2], 'paused_at', stamp)
redis.call('SPUBLISH', (string.gsub(KEYS[2], ':phase$', ':live')), 'paused ' .. ph[1])
return {'ok', ph[1], stamp, ph[3]}
