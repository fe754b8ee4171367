document.body.classList.add('js');
var sel=document.getElementById('size-select');
function show(){document.querySelectorAll('.size').forEach(function(d){d.classList.toggle('on',d.id===sel.value);});}
if(sel){sel.addEventListener('change',show);show();}
window.addEventListener('load',function(){void document.body.offsetHeight;document.body.setAttribute('data-load-ms',Math.round(performance.now()));});
