ByaJH)\Àff"AfföÀ>
W¾fföÀ{N@ff"Aff"AfföÀfföÀff"AfföÀfföÀ®G¡?33³¿š™‘À>
×¿ff"A