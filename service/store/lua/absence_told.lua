-- Tell a seat what was played for it during an absence that has ended (issue 25), once:
-- the absence leaves the seat's list and the summary event is appended in the same
-- script, so the job at the absence's end and the sweep (the net under a lost job) never
-- tell it twice, and a crash never loses it (the absence stays listed until told).
-- KEYS: meta, events, absences
-- ARGV: 1 seat, 2 the absence's start, 3 its end (whole seconds), 4 the event (JSON)
-- Answers {'ok', first, last, stamp}, {'told'} (no such absence: told before) or {'no_game'}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'no_game'} end
local raw = redis.call('HGET', KEYS[3], ARGV[1])
if not raw then return {'told'} end
local list = cjson.decode(raw)
local kept, found = {}, false
for _, a in ipairs(list) do
  if not found and tonumber(a['from']) == tonumber(ARGV[2]) and tonumber(a['until']) == tonumber(ARGV[3]) then
    found = true
  else
    kept[#kept + 1] = a
  end
end
if not found then return {'told'} end
if #kept == 0 then
  redis.call('HDEL', KEYS[3], ARGV[1])
else
  redis.call('HSET', KEYS[3], ARGV[1], cjson.encode(kept))
end
local t = redis.call('TIME')
local stamp = string.format('%.6f', tonumber(t[1]) + tonumber(t[2]) / 1000000)
if redis.call('HEXISTS', KEYS[1], 'notified_through') == 0 then
  redis.call('HSET', KEYS[1], 'notified_through', redis.call('HGET', KEYS[1], 'event_seq') or '0')
end
local ids = ids_open(KEYS[1])
local seq = redis.call('HINCRBY', KEYS[1], 'event_seq', 1)
local fields = {'e', ARGV[4], 'at', stamp}
local v = ids_add(ids, ARGV[4])
if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
redis.call('XADD', KEYS[2], seq .. '-1', unpack(fields))
ids_close(KEYS[1], ids)
redis.call('SPUBLISH', (string.gsub(KEYS[2], ':events$', ':live')), 'events')
return {'ok', tostring(seq), tostring(seq), stamp}
