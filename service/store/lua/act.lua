-- Commit an unprompted action (`service.core.actions`): compare-and-set on the open step
-- and its state version, so an action and a step's resolution never overwrite each
-- other (commit.lua compares the same version: a resolver that read the state before
-- this action commits nothing and resolves again from the new state). The one-time id
-- of the action's token is recorded here, in the same atomic step, so a token is
-- applied at most once. The events are appended after the last one, like a message's
-- (no commit tag `c`); the first carries the action's history record (field `x`:
-- {phase, seat, action, submitted, state_sha256, events}), which `Games.history` puts
-- into its step's record, so a replay applies the actions in order.
-- KEYS: meta, phase, state, events, the game's action one-time ids (ZSET id -> expiry)
-- ARGV: 1 open step id  2 state version read ('0' when none)  3 new state (JSON)
--       4 one-time id ('' for none)  5 its TTL (seconds)  6 history record (JSON)
--       7.. events (JSON, without id)
-- Answers {'ok', first, last, stamp, new version}, {'moved'} (the step or its state
-- changed since it was read: read again), {'replayed'}, or the game's status
-- ({'no_game'}, {'lobby'}, {'finished'}), or {'paused'} (the host paused the game: an
-- action would change the state while the clock is stopped; pause.lua).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'no_game'} end
if status ~= 'running' then return {status} end
local ph = redis.call('HMGET', KEYS[2], 'id', 'status', 'v', 'paused_at')
if ph[1] ~= ARGV[1] or ph[2] == 'finished' or (ph[3] or '0') ~= ARGV[2] then return {'moved'} end
if ph[4] and ph[4] ~= '' then return {'paused'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local stamp = string.format('%.6f', now)
if ARGV[4] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
  if redis.call('ZSCORE', KEYS[5], ARGV[4]) then return {'replayed'} end
  redis.call('ZADD', KEYS[5], now + tonumber(ARGV[5]), ARGV[4])
  redis.call('EXPIRE', KEYS[5], ARGV[5])
end
redis.call('SET', KEYS[3], ARGV[3])
local v = redis.call('HINCRBY', KEYS[2], 'v', 1)
-- A game made before the notified mark existed has none: its earlier events were told then.
if redis.call('HEXISTS', KEYS[1], 'notified_through') == 0 then
  redis.call('HSET', KEYS[1], 'notified_through', redis.call('HGET', KEYS[1], 'event_seq') or '0')
end
local first = nil
local seq = 0
local ids = ids_open(KEYS[1])  -- each viewer's ids (the prelude numbering.lua)
for i = 7, #ARGV do
  seq = redis.call('HINCRBY', KEYS[1], 'event_seq', 1)
  local fields = {'e', ARGV[i], 'at', stamp}
  if not first then
    first = seq
    fields[#fields + 1] = 'x'; fields[#fields + 1] = ARGV[6]
  end
  local v = ids_add(ids, ARGV[i])
  if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
  redis.call('XADD', KEYS[4], seq .. '-1', unpack(fields))
end
ids_close(KEYS[1], ids)
redis.call('HSET', KEYS[1], 'updated_at', stamp)
redis.call('SPUBLISH', (string.gsub(KEYS[4], ':events$', ':live')), 'events')
return {'ok', tostring(first), tostring(seq), stamp, tostring(v)}
