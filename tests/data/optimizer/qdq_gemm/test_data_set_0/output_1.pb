BybJ<{NÀHá
@ff"A{Î¿33³À®ïÀ®G!AfföÀ\šÀfföÀ333@ff"AHáú>)\>ff"A