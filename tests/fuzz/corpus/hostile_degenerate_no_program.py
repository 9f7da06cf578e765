import pypto.language as pl
X = 1
