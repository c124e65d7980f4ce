from common import *
with Victim() as v: time.sleep(10)
print("baseline victim:", summary(v.samples))
