-- Compare-and-set commit of a resolved step (or of the game's start): writes the new
-- state, opens the next step with its deadline, and appends the events to the stream,
-- the first of them with the step's history record (the accepted orders). A duplicate
-- or late resolver finds the step no longer `resolving` and changes nothing. Answers {1, next deadline, last event
-- number, '1' when nobody is to be told (no contacts) else '0', the game's status before
-- the commit, its created_at[, the seats (flat field/value list) when KEYS[9] is given and a step
-- opens]} (the caller moves the game between the listing indexes when the status changed:
-- another slot, a call of its own after this script).
-- The meta is read once (one HMGET) and written once (one HSET) besides the events' XADDs:
-- every inner command is work for the store on every step of every game.
--
-- Every effect outside the script must be derivable again from what it writes (the
-- sweep, `service.jobs.sweep`, does so after a crash): each event's stream entry
-- carries the commit it belongs to (`c`: the closed step, `d`: the opened step's
-- deadline, '' when the game is over), so the notices of any event can be made again;
-- the meta field `notified_through` (beside `event_seq`) says through which event the
-- notices were made. With no contacts there is nobody to tell, and the mark moves on
-- here. The running set and the listing indexes are other hash slots: written after
-- this script (`Orders._commit`), and the sweep reconciles and repairs them.
-- KEYS: phase, state, orders of the step, events, history (list, of old games), meta[, contact[, the step's
-- one-time ids[, seats]]] (the one-time ids of a closed step's tokens can never be accepted again: dropped
-- here; the seats, when given and a step opens, are answered as they are at the commit: who the bots are)
-- ARGV: 1 phase id being closed ('0' starts the game from the lobby)
--       2 state (JSON)  3 history entry (JSON, '' for none)
--       4 next phase id ('' when the game is over)  5 next expected seats (JSON)
--       6 next kind  7 next sealed ('1'/'0')  8 next step length (seconds)
--       9 game status after the commit  10 the state version the resolution read (the
--       phase's `v`, '0' when none; '' for the start)
--       11 extra fields written with the commit (JSON {"meta": {field: text}, "step":
--       {field: text}}, '' for none): meta fields, and fields of the opened step's hash
--       (a time bank's `banks`, service/core/timebank.py)
--       12.. events (JSON, without id)
-- The version makes the commit a compare-and-set on the state as well as the step: an
-- unprompted action (act.lua) committed after the resolver read the state bumps it,
-- and this commit then changes nothing and answers {0, 'moved'} (resolve again).
if ARGV[1] == '0' then
  if redis.call('HGET', KEYS[6], 'status') ~= 'lobby' then return {0, ''} end
else
  local ph = redis.call('HMGET', KEYS[1], 'id', 'status', 'v')
  if ph[1] ~= ARGV[1] or ph[2] ~= 'resolving' then
    return {0, ''}
  end
  if ARGV[10] ~= '' and (ph[3] or '0') ~= ARGV[10] then
    return {0, 'moved'}
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local stamp = string.format('%.6f', now)
redis.call('SET', KEYS[2], ARGV[2])
-- The history record rides on the commit's first event (field `h`), so it is packed
-- with the events (`service.store.archive`); a game whose records are in its history
-- list (stored before records moved into the events) keeps adding them there.
local record = ARGV[3]
if record ~= '' and redis.call('EXISTS', KEYS[5]) == 1 then
  redis.call('RPUSH', KEYS[5], record)
  record = ''
end
if KEYS[8] then redis.call('DEL', KEYS[3], KEYS[8], KEYS[1]) else redis.call('DEL', KEYS[3], KEYS[1]) end
local deadline = ''
-- For the live message (below): the opened step's state version, and whether its id and
-- status are the ones written here.
local version, pushable = '0', true
if ARGV[4] ~= '' then
  deadline = string.format('%.6f', now + tonumber(ARGV[8]))
  redis.call('HSET', KEYS[1], 'id', ARGV[4], 'status', 'collecting', 'expected', ARGV[5],
    'kind', ARGV[6], 'sealed', ARGV[7], 'opened_at', stamp, 'deadline', deadline,
    'seconds', ARGV[8], 'extended', '0', 'attempt', '0')
  if ARGV[11] ~= '' then
    for k, v in pairs(cjson.decode(ARGV[11])['step'] or {}) do
      redis.call('HSET', KEYS[1], k, v)
      if k == 'v' then version = v elseif k == 'id' or k == 'status' then pushable = false end
    end
  end
else
  redis.call('HSET', KEYS[1], 'id', tostring(tonumber(ARGV[1]) + 1), 'status', 'finished',
    'expected', '[]', 'opened_at', stamp)
end
local m = redis.call('HMGET', KEYS[6], 'notified_through', 'event_seq', 'event_ids', 'seats', 'status',
  'created_at')
local seq = tonumber(m[2] or '0')
local out = {}  -- the meta's fields to write, field/value
-- A game made before the mark existed has none: its earlier events were told then.
if not m[1] then
  out[#out + 1] = 'notified_through'; out[#out + 1] = m[2] or '0'
end
if ARGV[11] ~= '' then
  for k, v in pairs(cjson.decode(ARGV[11])['meta'] or {}) do out[#out + 1] = k; out[#out + 1] = v end
end
-- Each viewer's ids (the prelude numbering.lua's `ids_open`, from the fields read above).
local ids = nil
if m[3] then
  ids = {}
  for x in string.gmatch(m[3], '[^,]+') do ids[#ids + 1] = tonumber(x) end
elseif seq == 0 then
  ids = {}
  for i = 1, tonumber(m[4] or '0') + 1 do ids[i] = 0 end
end
local counts = {}  -- each event's counts as stored (`v`, '' for none): for the live message
for i = 12, #ARGV do
  seq = seq + 1
  local fields = {'e', ARGV[i], 'at', stamp, 'c', ARGV[1], 'd', deadline}
  if i == 12 and record ~= '' then
    fields[#fields + 1] = 'h'; fields[#fields + 1] = record
  end
  local v = ids_add(ids, ARGV[i])
  if v then fields[#fields + 1] = 'v'; fields[#fields + 1] = v end
  counts[#counts + 1] = v or ''
  redis.call('XADD', KEYS[4], seq .. '-1', unpack(fields))
end
if #ARGV >= 12 then out[#out + 1] = 'event_seq'; out[#out + 1] = tostring(seq) end
if ids then out[#out + 1] = 'event_ids'; out[#out + 1] = table.concat(ids, ',') end
out[#out + 1] = 'status'; out[#out + 1] = ARGV[9]
out[#out + 1] = 'updated_at'; out[#out + 1] = stamp
local told = '0'
if KEYS[7] and redis.call('HLEN', KEYS[7]) == 0 then
  out[#out + 1] = 'notified_through'; out[#out + 1] = tostring(seq)
  told = '1'
end
redis.call('HSET', KEYS[6], unpack(out))
-- The live message (`service.core.live.Commit`): 'commit' and, when it fits in LIVE_MAX
-- bytes, what a stream woken by it needs so that it reads nothing, one line each:
--   'commit <event number before the commit> <opened step id> <its status> <its state version>'
--   the commit's time stamp (each event's `at`)
--   the opened step's state ('' when left out: it did not fit, or the game is over)
--   then per event its counts as stored (`v`, '' for none) and its text as stored (`e`).
-- A commit with no events, text holding a line break, or events over the bound says just
-- 'commit' (every stream reads then); a state over it is left out.
local LIVE_MAX = 16384
local live = 'commit'
if pushable and #ARGV >= 12 then
  local step_id, step_status, state = ARGV[4], 'collecting', ARGV[2]
  if ARGV[4] == '' then step_id, step_status, state = tostring(tonumber(ARGV[1]) + 1), 'finished', '' end
  local parts = {'commit ' .. tostring(seq - (#ARGV - 11)) .. ' ' .. step_id .. ' ' .. step_status .. ' ' .. version,
                 stamp, ''}
  local size = #parts[1] + #stamp + 2
  for i = 12, #ARGV do
    local e = ARGV[i]
    if string.find(e, '\n', 1, true) then size = nil; break end
    size = size + #e + #counts[i - 11] + 2
    parts[#parts + 1] = counts[i - 11]
    parts[#parts + 1] = e
  end
  if size and size <= LIVE_MAX then
    if state ~= '' and size + #state + 1 <= LIVE_MAX and not string.find(state, '\n', 1, true) then
      parts[3] = state
    end
    live = table.concat(parts, '\n')
  end
end
redis.call('SPUBLISH', (string.gsub(KEYS[1], ':phase$', ':live')), live)
local answer = {1, deadline, tostring(seq), told, m[5] or '', m[6] or stamp}
if KEYS[9] and ARGV[4] ~= '' then answer[7] = redis.call('HGETALL', KEYS[9]) end
return answer
