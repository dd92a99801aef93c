-- Apply a rollback (`service.core.rollback`), exactly once: commit.lua's variant for a
-- step that is not resolved but abandoned. A compare-and-set on the open step's id, its
-- status `collecting` and (when given) its state version, and (on the consent path) on the
-- pending proposal's id; then, in one atomic write: the restored state, the open step's
-- stored orders discarded (kept whole in the rollback's history record, which rides on the
-- first event as commit.lua's records do: published only with the history, once the game
-- is over), its one-time ids dropped, the new step opened with a fresh deadline (paused
-- when the step was: the pause helper's `paused_at`, set to now, so a resume gives it its
-- whole length), and the events appended, tagged with this commit (`c`: the abandoned
-- step, `d`: the new step's deadline) so the notices can be made again after a crash.
-- A pending proposal lives in the step hash (rollback_vote.lua): deleting the hash drops it.
-- KEYS: phase, state, orders of the open step, events, history (list, of old games), meta,
--       contact, the open step's one-time ids
-- ARGV: 1 the open step's id  2 its state version as read ('' for any)
--       3 '1': refuse while the open step is sealed and holds orders (nothing hidden may
--         have been revealed when no consent is asked), else '0'
--       4 the proposal's id ('' when no proposal is needed)
--       5 the restored state (JSON)  6 the rollback record (JSON object, without the
--         discarded orders and the time: added here)
--       7 the new step's id  8 its expected seats (JSON)  9 its kind  10 sealed ('1'/'0')
--       11 its length (seconds)  12 more fields of the new step (a JSON object: a time
--       bank's opening `banks`; '' for none)  13.. events (JSON, without id)
-- Answers {'ok', deadline, last event number, told ('1': nobody to tell), paused ('1'/'0')}
-- or {'refused', why}: 'no_game', 'lobby', 'finished', 'moved' (another step is open),
-- 'locked' (the step is being resolved), 'version' (an action changed the state since it
-- was read), 'sealed_orders', 'no_proposal' (withdrawn, refused or lapsed).
local status = redis.call('HGET', KEYS[6], 'status')
if not status then return {'refused', 'no_game'} end
if status ~= 'running' then return {'refused', status} end
local ph = redis.call('HMGET', KEYS[1], 'id', 'status', 'v', 'sealed', 'rollback_id', 'paused_at')
if ph[1] ~= ARGV[1] then return {'refused', 'moved'} end
if ph[2] ~= 'collecting' then return {'refused', ph[2] == 'finished' and 'finished' or 'locked'} end
if ARGV[2] ~= '' and (ph[3] or '0') ~= ARGV[2] then return {'refused', 'version'} end
if ARGV[3] == '1' and ph[4] == '1' and redis.call('HLEN', KEYS[3]) > 0 then
  return {'refused', 'sealed_orders'}
end
if ARGV[4] ~= '' and ph[5] ~= ARGV[4] then return {'refused', 'no_proposal'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local stamp = string.format('%.6f', now)
-- The record: the rollback object, with the discarded orders as stored (whole records,
-- seat -> record; `Games.history` keeps only the orders) and the time.
local parts = {}
local stored = redis.call('HGETALL', KEYS[3])
for i = 1, #stored, 2 do
  parts[#parts + 1] = cjson.encode(stored[i]) .. ':' .. stored[i + 1]
end
local record = '{"rollback":' .. ARGV[6] .. ',"discarded":{' .. table.concat(parts, ',') .. '},"at":"' .. stamp .. '"}'
if redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('RPUSH', KEYS[5], record)
  record = ''
end
redis.call('SET', KEYS[2], ARGV[5])
redis.call('DEL', KEYS[3])
redis.call('DEL', KEYS[8])
redis.call('DEL', KEYS[1])
local deadline = string.format('%.6f', now + tonumber(ARGV[11]))
redis.call('HSET', KEYS[1], 'id', ARGV[7], 'status', 'collecting', 'expected', ARGV[8],
  'kind', ARGV[9], 'sealed', ARGV[10], 'opened_at', stamp, 'deadline', deadline,
  'seconds', ARGV[11], 'extended', '0', 'attempt', '0')
if ARGV[12] ~= '' then
  for k, v in pairs(cjson.decode(ARGV[12])) do redis.call('HSET', KEYS[1], k, v) end
end
local paused = '0'
if ph[6] and ph[6] ~= '' then
  redis.call('HSET', KEYS[1], 'paused_at', stamp, 'pauses', '[]')
  paused = '1'
end
if redis.call('HEXISTS', KEYS[6], 'notified_through') == 0 then
  redis.call('HSET', KEYS[6], 'notified_through', redis.call('HGET', KEYS[6], 'event_seq') or '0')
end
local seq = 0
local ids = ids_open(KEYS[6])
for i = 13, #ARGV do
  seq = redis.call('HINCRBY', KEYS[6], 'event_seq', 1)
  local fields = {'e', ARGV[i], 'at', stamp, 'c', ARGV[1], 'd', deadline}
  if i == 13 and record ~= '' then
    fields[#fields + 1] = 'h'; fields[#fields + 1] = record
  end
  local v = ids_add(ids, ARGV[i])
  if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
  redis.call('XADD', KEYS[4], seq .. '-1', unpack(fields))
end
ids_close(KEYS[6], ids)
redis.call('HSET', KEYS[6], 'updated_at', stamp)
local told = '0'
if redis.call('HLEN', KEYS[7]) == 0 then
  redis.call('HSET', KEYS[6], 'notified_through', redis.call('HGET', KEYS[6], 'event_seq') or '0')
  told = '1'
end
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), 'commit')
return {'ok', deadline, tostring(seq), told, paused}
