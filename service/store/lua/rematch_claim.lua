-- Claim a finished game's rematch, once: the first caller's new game id and host key
-- are recorded in the old game's meta (`rematch`, `rematch_host`) in one compare-and-set;
-- every later caller (a second request, a racing one, the sweep finishing a crashed
-- one) reads them back and builds that very game (`service.core.rematch`).
-- KEYS: meta (of the finished game)
-- ARGV: candidate game id, the new game's host key (public key text)
-- Answers {'new', id, host key}, {'claimed', id, host key}, or {'no_game'|'not_finished'}.
local m = redis.call('HMGET', KEYS[1], 'status', 'rematch', 'rematch_host')
if not m[1] then return {'no_game'} end
if m[1] ~= 'finished' then return {'not_finished'} end
if m[2] then return {'claimed', m[2], m[3] or ''} end
redis.call('HSET', KEYS[1], 'rematch', ARGV[1], 'rematch_host', ARGV[2])
return {'new', ARGV[1], ARGV[2]}
