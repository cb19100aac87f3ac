(function () {
'use strict';
var frames = document.getElementById('frames');
var details = document.getElementById('details');
var unzoomBtn = document.getElementById('unzoom');
var searchBtn = document.getElementById('search');
var matched = document.getElementById('matched');
var full = fg.width - 2 * fg.pad;
var all = [], re = null;

function label(name, w) {
	var fit = Math.floor((w - 6) / fg.charWidth);
	if (fit < 3) return '';
	return name.length <= fit ? name : name.slice(0, fit - 2) + '..';
}
function place(f, x, w) {
	f.rect.setAttribute('x', x.toFixed(2));
	f.rect.setAttribute('width', w.toFixed(2));
	f.text.setAttribute('x', (x + 3).toFixed(2));
	f.text.textContent = label(f.name, w);
}
function show(f, on, parent) {
	f.g.classList.toggle('hide', !on);
	f.g.classList.toggle('parent', parent);
}
function zoom(z) {
	var s = full / z.w;
	all.forEach(function (f) {
		if (f.d >= z.d && f.x >= z.x && f.x + f.w <= z.x + z.w) {
			show(f, true, false);
			place(f, fg.pad + (f.x - z.x) * s, f.w * s);
		} else if (f.d < z.d && f.x <= z.x && f.x + f.w >= z.x + z.w) {
			show(f, true, true);
			place(f, fg.pad, full);
		} else {
			show(f, false, false);
		}
	});
	unzoomBtn.classList.remove('hide');
}
function unzoom() {
	var s = full / fg.total;
	all.forEach(function (f) {
		show(f, true, false);
		place(f, fg.pad + f.x * s, f.w * s);
	});
	unzoomBtn.classList.add('hide');
}
function search(term) {
	var spans = [], sum = 0, end = -1;
	try {
		re = new RegExp(term);
	} catch (e) {
		matched.textContent = 'Bad regular expression: ' + term;
		return;
	}
	all.forEach(function (f) {
		var hit = re.test(f.name);
		f.g.classList.toggle('hit', hit);
		if (hit) spans.push([f.x, f.x + f.w]);
	});
	spans.sort(function (a, b) { return a[0] - b[0]; });
	spans.forEach(function (sp) {
		if (sp[1] <= end) return;
		sum += sp[1] - Math.max(sp[0], end);
		end = sp[1];
	});
	matched.textContent = 'Matched: ' + (100 * sum / fg.total).toFixed(2) + '%';
	searchBtn.textContent = 'Reset Search';
}
function resetSearch() {
	re = null;
	all.forEach(function (f) { f.g.classList.remove('hit'); });
	matched.textContent = ' ';
	searchBtn.textContent = 'Search';
}
function askSearch() {
	var last = re ? re.source : '';
	var term = window.prompt('Search frames (regular expression):', last);
	if (term) search(term);
}
function frameOf(el) {
	while (el && el.parentNode !== frames) el = el.parentNode;
	return el ? el.fgFrame : null;
}

Array.prototype.forEach.call(frames.children, function (g) {
	var t = g.querySelector('title').textContent;
	var n = g.getAttribute('data-n');
	var f = { g: g, title: t, name: n !== null ? n : t.slice(0, t.lastIndexOf(' (')),
		x: Number(g.getAttribute('data-x')),
		w: Number(g.getAttribute('data-w')),
		d: Number(g.getAttribute('data-d')),
		rect: g.querySelector('rect'), text: g.querySelector('text') };
	g.fgFrame = f;
	all.push(f);
});
frames.addEventListener('mouseover', function (e) {
	var f = frameOf(e.target);
	if (f) details.textContent = f.title;
});
frames.addEventListener('mouseout', function () { details.textContent = ' '; });
frames.addEventListener('click', function (e) {
	var f = frameOf(e.target);
	if (f) zoom(f);
});
unzoomBtn.addEventListener('click', unzoom);
searchBtn.addEventListener('click', function () {
	if (re) resetSearch(); else askSearch();
});
window.addEventListener('keydown', function (e) {
	if ((e.ctrlKey || e.metaKey) && e.key === 'f') {
		e.preventDefault();
		askSearch();
	} else if (e.key === 'Escape') {
		resetSearch();
	}
});
var q = new URLSearchParams(window.location.search).get('s');
if (q && fg.total) search(q);
})();
