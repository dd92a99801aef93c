-- Keep notices for a seat's next digest once per key (what they tell, for that seat):
-- a notify job that runs twice, or again after a crash, adds nothing the second time.
-- KEYS: digested (HASH of keys already kept), digest list of the seat
-- ARGV: 1 key  2.. notices (JSON)
-- Answers 1 when kept now, 0 when they were kept before.
if redis.call('HSETNX', KEYS[1], ARGV[1], '1') == 0 then return 0 end
for i = 2, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
return 1
