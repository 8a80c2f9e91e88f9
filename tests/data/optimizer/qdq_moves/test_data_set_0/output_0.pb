ByaJ(мл,аgfBAgfФюgfBAq=
Aмл,аgfBAHАZ@мл╛@мл,а