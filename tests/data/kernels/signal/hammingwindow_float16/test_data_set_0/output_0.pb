
ByJ
‘-p6M;M;p6