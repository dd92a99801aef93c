-- Move a game's `notified_through` mark (meta, beside `event_seq`) forward: the notices
-- of every event up to it are made. It never moves back, nor past the last event.
-- KEYS: meta, contact
-- ARGV: 1 the event number the notices are made through; '' for "every event, if no
--       seat has a contact" (nobody to tell: checked here, atomically with the move)
-- Answers the mark after the call.
local mark = tonumber(redis.call('HGET', KEYS[1], 'notified_through') or '0')
local seq = tonumber(redis.call('HGET', KEYS[1], 'event_seq') or '0')
local target
if ARGV[1] == '' then
  if redis.call('HLEN', KEYS[2]) ~= 0 then return tostring(mark) end
  target = seq
else
  target = math.min(tonumber(ARGV[1]), seq)
end
if target > mark then
  redis.call('HSET', KEYS[1], 'notified_through', tostring(target))
  mark = target
end
return tostring(mark)
