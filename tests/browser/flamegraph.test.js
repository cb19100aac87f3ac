#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// Drive a flame graph SVG written by `profile --format svg` in headless
// Chromium, as a person would: hover a frame, click to zoom, reset, search
// with Ctrl-F and with the Search button, and open it with ?s=REGEX.  It
// uses Debian's /usr/bin/chromium (CHROMIUM overrides); nothing is
// downloaded, and any request that is not the file itself fails the test.
//
//   node flamegraph.test.js FILE.svg SHOT_DIR [RATIO_LO RATIO_HI]
//
// The SVG must have func_a and func_b frames, func_b RATIO_LO..RATIO_HI
// (default 2.7..3.3) times as wide as func_a, as the burn workload gives.
// Screenshots go to SHOT_DIR/NAME-{initial,zoom,search}.png.  Prints one
// TAP line per check and exits non-zero if any failed.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { pathToFileURL } = require('url');
const { chromium } = require('playwright-core');

const svgPath = path.resolve(process.argv[2] || '');
const shotDir = path.resolve(process.argv[3] || '.');
const ratioLo = Number(process.argv[4] || 2.7);
const ratioHi = Number(process.argv[5] || 3.3);
const shotName = path.basename(svgPath, '.svg');
// Percent-encoded, as the browser requests it: the path may hold a space.
const fileUrl = pathToFileURL(svgPath).href;
const FULL = 1180;	// image width less both margins

let checks = 0;
let failures = 0;

function check(ok, desc, detail) {
	checks++;
	if (ok) {
		console.log(`ok ${checks} - ${desc}`);
	} else {
		failures++;
		console.log(`not ok ${checks} - ${desc}${detail === undefined ? '' : ' # ' + detail}`);
	}
}

function near(a, b, tolerance) {
	return Math.abs(a - b) <= tolerance;
}

// Every drawn frame: name, rect geometry, state, samples.
function frames(page) {
	return page.$$eval('#frames > g', (gs) => gs.map((g, i) => {
		const t = g.querySelector('title').textContent;
		const r = g.querySelector('rect');
		const box = r.getBoundingClientRect();
		return {
			i,
			name: g.getAttribute('data-n') ?? t.slice(0, t.lastIndexOf(' (')),
			title: t,
			x: Number(r.getAttribute('x')),
			w: Number(r.getAttribute('width')),
			sx: Number(g.getAttribute('data-x')),
			sw: Number(g.getAttribute('data-w')),
			depth: Number(g.getAttribute('data-d')),
			hidden: getComputedStyle(g).display === 'none',
			parent: g.classList.contains('parent'),
			fill: getComputedStyle(r).fill,
			cx: box.x + box.width / 2,
			cy: box.y + box.height / 2,
		};
	}));
}

function named(all, name) {
	return all.filter((f) => f.name === name);
}

function widest(all, name) {
	return named(all, name).reduce((a, b) => (!a || b.w > a.w ? b : a), null);
}

async function textOf(page, id) {
	return page.$eval('#' + id, (el) => el.textContent);
}

async function clickText(page, id) {
	const box = await page.$eval('#' + id, (el) => {
		const b = el.getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
	});
	await page.mouse.click(box.x, box.y);
}

// The share of samples under frames matching re, nested ones counted once.
function expectedMatch(all, re, total) {
	const spans = all.filter((f) => re.test(f.name)).map((f) => [f.sx, f.sx + f.sw]);
	let sum = 0;
	let end = -1;

	spans.sort((a, b) => a[0] - b[0]);
	for (const [s, e] of spans) {
		if (e <= end)
			continue;
		sum += e - Math.max(s, end);
		end = e;
	}
	return (100 * sum) / total;
}

async function searchChecks(page, all, total, term, how) {
	const re = new RegExp(term);
	const expect = expectedMatch(all, re, total);
	let after;
	let text;

	page.once('dialog', (d) => d.accept(term));
	if (how === 'key')
		await page.keyboard.press('Control+f');
	else
		await clickText(page, 'search');
	await page.waitForFunction(() => document.getElementById('matched').textContent.startsWith('Matched'));
	after = await frames(page);
	text = await textOf(page, 'matched');
	const hits = after.filter((f) => f.fill === 'rgb(230, 0, 230)');
	check(hits.length > 0 && hits.every((f) => re.test(f.name)),
	      `${how} search /${term}/ highlights only matching frames`, `${hits.length} highlighted`);
	check(after.filter((f) => re.test(f.name)).every((f) => f.fill === 'rgb(230, 0, 230)'),
	      `${how} search /${term}/ highlights every matching frame`);
	const pct = Number(text.replace(/^Matched: ([0-9.]+)%$/, '$1'));
	check(near(pct, expect, 0.011), `${how} search shows the matched share`,
	      `"${text}", expected ${expect.toFixed(2)}%`);
	check((await textOf(page, 'search')) === 'Reset Search', 'the Search button offers a reset');
}

async function run(context) {
	const page = await context.newPage();
	const errors = [];
	const foreign = [];

	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	await context.route('**/*', (route) => {
		const url = route.request().url();
		if (url.split('?')[0] === fileUrl)
			return route.continue();
		foreign.push(url);
		return route.abort();
	});

	await page.goto(fileUrl);
	const height = await page.$eval('svg', (s) => Number(s.getAttribute('height')));
	await page.setViewportSize({ width: 1200, height: Math.min(Math.max(height, 100), 4000) });
	await page.screenshot({ path: path.join(shotDir, `${shotName}-initial.png`) });

	let all = await frames(page);
	const root = widest(all, 'all');
	check(all.length > 3 && root && near(root.w, FULL, 0.01), 'frames drawn, the root spans the width',
	      `${all.length} frames`);
	const total = root ? root.sw : 1;
	const sumW = (name) => named(all, name).reduce((s, f) => s + f.w, 0);
	const ratio = sumW('func_b') / sumW('func_a');
	check(ratio >= ratioLo && ratio <= ratioHi, `func_b is ${ratioLo}..${ratioHi} x as wide as func_a`,
	      `ratio ${ratio.toFixed(3)}`);

	// Hover: the details line shows name, samples and percentage.
	const b = widest(all, 'func_b');
	await page.mouse.move(b.cx, b.cy);
	const details = await textOf(page, 'details');
	check(/^func_b \([0-9]+ samples?, [0-9.]+%\)$/.test(details) && details === b.title,
	      'hovering func_b shows its name, samples and share', `"${details}"`);

	// Zoom into func_a.
	const a = widest(all, 'func_a');
	await page.mouse.click(a.cx, a.cy);
	all = await frames(page);
	const za = all[a.i];
	check(near(za.x, 10, 0.01) && near(za.w, FULL, 0.01), 'clicking func_a zooms it to the full width',
	      `x ${za.x} width ${za.w}`);
	check(named(all, 'func_b').every((f) => f.hidden), 'func_b, beside it, is hidden');
	const ancestors = all.filter((f) => f.depth < za.depth && f.sx <= za.sx && f.sx + f.sw >= za.sx + za.sw);
	check(ancestors.length === za.depth && ancestors.every((f) => f.parent && !f.hidden && near(f.w, FULL, 0.01)),
	      'its ancestors span the width, dimmed');
	const above = all.filter((f) => f.depth > za.depth && f.sx >= za.sx && f.sx + f.sw <= za.sx + za.sw);
	check(above.every((f) => !f.hidden && near(f.w, (f.sw / za.sw) * FULL, 0.02)),
	      'frames above it are scaled with it', `${above.length} frames`);
	check(!(await page.$eval('#unzoom', (el) => el.classList.contains('hide'))), 'Reset Zoom appears');
	await page.screenshot({ path: path.join(shotDir, `${shotName}-zoom.png`) });

	// Reset.
	await clickText(page, 'unzoom');
	const reset = await frames(page);
	check(reset.every((f, i) => !f.hidden && !f.parent && near(f.w, (f.sw / total) * FULL, 0.02) &&
			  near(f.x, 10 + (f.sx / total) * FULL, 0.02)) && near(reset[a.i].w, a.w, 0.02),
	      'Reset Zoom puts every frame back');
	check(await page.$eval('#unzoom', (el) => el.classList.contains('hide')), 'Reset Zoom hides itself');

	// Search: Ctrl-F, Escape, the Search button.
	await searchChecks(page, reset, total, '^func_[ab]$', 'key');
	await page.screenshot({ path: path.join(shotDir, `${shotName}-search.png`) });
	await page.keyboard.press('Escape');
	check((await frames(page)).every((f) => f.fill !== 'rgb(230, 0, 230)') &&
	      (await textOf(page, 'matched')).trim() === '', 'Escape clears the search');
	await searchChecks(page, reset, total, 'func_b', 'button');

	// A search given in the URL.
	await page.goto(fileUrl + '?s=' + encodeURIComponent('^func_a$'));
	const fromUrl = (await frames(page)).filter((f) => f.fill === 'rgb(230, 0, 230)');
	check(fromUrl.length > 0 && fromUrl.every((f) => f.name === 'func_a'), '?s=REGEX searches on load');

	check(errors.length === 0, 'no script errors', errors.join('; '));
	check(foreign.length === 0, 'nothing fetched but the file', foreign.join(' '));
}

async function main() {
	if (!fs.existsSync(svgPath)) {
		console.error(`usage: flamegraph.test.js FILE.svg SHOT_DIR [RATIO_LO RATIO_HI]: no ${svgPath}`);
		process.exit(2);
	}
	fs.mkdirSync(shotDir, { recursive: true });
	const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'profile-chromium-'));
	const context = await chromium.launchPersistentContext(userDataDir, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
		viewport: { width: 1200, height: 400 },
	});
	try {
		await run(context);
	} catch (e) {
		check(false, 'the browser session ran to the end', String(e && e.stack || e));
	} finally {
		await context.close();
		fs.rmSync(userDataDir, { recursive: true, force: true });
	}
	console.log(`# ${checks - failures} passed, ${failures} failed`);
	process.exit(failures ? 1 : 0);
}

main();
