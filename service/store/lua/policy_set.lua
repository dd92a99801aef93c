-- Replace a game's deadline policy (the host's change of its absence policy, issue 25):
-- a compare-and-set on the policy as it was read.
-- KEYS: meta
-- ARGV: 1 the policy as read, 2 the new policy (JSON)
-- Answers {'ok'} or {'moved'}.
if redis.call('HGET', KEYS[1], 'policy') ~= ARGV[1] then return {'moved'} end
redis.call('HSET', KEYS[1], 'policy', ARGV[2])
return {'ok'}
