" Hotline: nothing starts until require('hotline').setup() is called (see
" editors/nvim/README.md); this file only marks the plugin as loaded.
if exists('g:loaded_hotline') | finish | endif
let g:loaded_hotline = 1
