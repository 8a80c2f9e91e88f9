ByJxZXX2Úk_H'wggo€Ÿkllowggo€ell
‘|n9==ddoH|n88⁄ddoHv?[cc&CwFTTVV2||w~~TT‹2||qq~jjSup6NppNz,DAccNpp.dyygJJ:V[)+}}g]]