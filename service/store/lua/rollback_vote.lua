-- A rollback proposal that asks for consent (`service.core.rollback`), kept in the open
-- step's hash so that it lapses with the step (commit.lua and rollback.lua delete the
-- hash): `rollback_id`, `rollback` (the proposal, JSON), `rollback_expires` (seconds) and
-- one `rollback_yes:<seat>` per seat that agreed. Each change and its events (appended
-- like a message's, numbered by the prelude numbering.lua) are one atomic write.
-- KEYS: meta, phase, events
-- ARGV: 1 'propose', 'agree', 'refuse' or 'withdraw'  2 the open step's id
--       3 the proposal's id  4 the seat ('' for the host)
--       5 the seats whose consent is needed (comma separated)
--       6 (propose) when it lapses (seconds)  7 (propose) the proposal (JSON)
--       8.. events (JSON, without id)
-- Answers {'ok', outcome, last event number} where outcome is 'proposed', 'agreed' (more
-- consents needed), 'all' (every needed seat agreed: apply it now, rollback.lua), 'refused'
-- or 'withdrawn'; or {'refused', why}: 'no_game', 'lobby', 'finished', 'moved' (another
-- step is open), 'locked' (the step is being resolved), 'pending' (a proposal is pending
-- already), 'no_proposal', 'lapsed' (its time ran out: dropped now, without events).
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'refused', 'no_game'} end
if status ~= 'running' then return {'refused', status} end
local ph = redis.call('HMGET', KEYS[2], 'id', 'status', 'rollback_id', 'rollback_expires')
if ph[1] ~= ARGV[2] then return {'refused', 'moved'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local function drop()
  redis.call('HDEL', KEYS[2], 'rollback_id', 'rollback', 'rollback_expires')
  for s = 0, tonumber(redis.call('HGET', KEYS[1], 'seats') or '0') - 1 do
    redis.call('HDEL', KEYS[2], 'rollback_yes:' .. s)
  end
end
local pending = ph[3] and ph[3] ~= ''
if pending and tonumber(ph[4] or '0') <= now then
  drop()
  if ARGV[1] ~= 'propose' then return {'refused', 'lapsed'} end
  pending = false
end
local outcome
if ARGV[1] == 'propose' then
  if ph[2] ~= 'collecting' then return {'refused', 'locked'} end
  if pending then return {'refused', 'pending'} end
  redis.call('HSET', KEYS[2], 'rollback_id', ARGV[3], 'rollback', ARGV[7], 'rollback_expires', ARGV[6])
  outcome = 'proposed'
else
  if not pending or ph[3] ~= ARGV[3] then return {'refused', 'no_proposal'} end
  if ARGV[1] == 'agree' then
    local again = redis.call('HEXISTS', KEYS[2], 'rollback_yes:' .. ARGV[4]) == 1
    redis.call('HSET', KEYS[2], 'rollback_yes:' .. ARGV[4], '1')
    outcome = 'all'
    for s in string.gmatch(ARGV[5], '[^,]+') do
      if redis.call('HEXISTS', KEYS[2], 'rollback_yes:' .. s) == 0 then outcome = 'agreed' end
    end
    if again then return {'ok', outcome, ''} end  -- said before: no second event
  else
    drop()
    outcome = ARGV[1] == 'refuse' and 'refused' or 'withdrawn'
  end
end
local stamp = string.format('%.6f', now)
if redis.call('HEXISTS', KEYS[1], 'notified_through') == 0 then
  redis.call('HSET', KEYS[1], 'notified_through', redis.call('HGET', KEYS[1], 'event_seq') or '0')
end
local seq = 0
local ids = ids_open(KEYS[1])
for i = 8, #ARGV do
  seq = redis.call('HINCRBY', KEYS[1], 'event_seq', 1)
  local fields = {'e', ARGV[i], 'at', stamp}
  local v = ids_add(ids, ARGV[i])
  if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
  redis.call('XADD', KEYS[3], seq .. '-1', unpack(fields))
end
ids_close(KEYS[1], ids)
redis.call('SPUBLISH', (string.gsub(KEYS[2], ':phase$', ':live')), 'events')
return {'ok', outcome, tostring(seq)}
