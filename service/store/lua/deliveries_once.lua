-- Store several delivery records of one game (a commit's webhooks), each under an id
-- derived from what it tells (see `service.channels.notify`) unless one is there
-- already: a notify job that runs twice, or again after a crash, makes no second
-- delivery. One call for what `delivery_once.lua` does per record.
-- KEYS: 1 delivery (HASH), 2 contact (HASH), 3.. the seats' lists of deliveries (LIST)
-- ARGV: 1 how many ids a seat's list keeps; 2 '1': then read the contacts and the clock
--       (the sends' `contacts_and_time`, in the same command); then per record: its id,
--       the index in KEYS of its seat's list, the record (JSON)
-- Answers per record two values: 1 and '' when stored now; else 0 and, when the stored
-- record was never attempted (status queued, attempts 0: to be sent again), its text,
-- else its status (a record already attempted is not sent by this job). With ARGV 2,
-- then the contacts (flat field/value list) and {seconds, microseconds}.
local out, trim = {}, {}
for i = 3, #ARGV, 3 do
  local id, list = ARGV[i], tonumber(ARGV[i + 1])
  if redis.call('HSETNX', KEYS[1], id, ARGV[i + 2]) == 1 then
    redis.call('LPUSH', KEYS[list], id)
    trim[list] = true
    out[#out + 1] = 1
    out[#out + 1] = ''
  else
    local raw = redis.call('HGET', KEYS[1], id)
    local rec = cjson.decode(raw)
    out[#out + 1] = 0
    if rec['status'] == 'queued' and (tonumber(rec['attempts']) or 0) == 0 then
      out[#out + 1] = raw
    else
      out[#out + 1] = tostring(rec['status'])
    end
  end
end
for list in pairs(trim) do
  redis.call('LTRIM', KEYS[list], 0, tonumber(ARGV[1]) - 1)
end
if ARGV[2] == '1' then
  out[#out + 1] = redis.call('HGETALL', KEYS[2])
  out[#out + 1] = redis.call('TIME')
end
return out
